package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.S16;
import static ml.juno.engine.kernel.cpu.QuantLanes.I8;
import static ml.juno.engine.kernel.cpu.QuantLanes.B16;
import static ml.juno.engine.kernel.cpu.QuantLanes.widen;
import static ml.juno.engine.kernel.cpu.QuantLanes.nibbles;
import static ml.juno.engine.kernel.cpu.QuantLanes.bitsTo;
import static ml.juno.engine.kernel.cpu.QuantLanes.k4;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q5_K ({@code block_q5_K}, 176 bytes per 256 weights: as Q4_K ({@link Q4_KKernel}, whose scale unpacking it uses) plus
 * the fifth bit of every quant in {@code qh[32]}), against Q8_K activations.
 */
final class Q5_KKernel extends SuperBlockKernel {
    Q5_KKernel() {
        super(GgmlType.Q5_K, 32, true);
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 256; b++) {
            q5_kBlock(s, off + b * 176L, dst, dstOff + b * 256);
        }
    }

    // block_q5_K: d f16, dmin f16, scales[12], qh[32], qs[128]
    private static void q5_kBlock(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        float dmin = half(s, o + 2);
        int out = d0;
        for (int j = 0; j < 4; j++) {
            long q = o + 48 + j * 32L;
            float d1 = d * Q4_KKernel.scaleK4(s, o + 4, 2 * j);
            float m1 = dmin * Q4_KKernel.minK4(s, o + 4, 2 * j);
            float d2 = d * Q4_KKernel.scaleK4(s, o + 4, 2 * j + 1);
            float m2 = dmin * Q4_KKernel.minK4(s, o + 4, 2 * j + 1);
            int u1 = 1 << (2 * j);
            int u2 = 2 << (2 * j);
            for (int l = 0; l < 32; l++) {
                int h = u8(s, o + 16 + l);
                y[out + l] = d1 * ((u8(s, q + l) & 0xF) + ((h & u1) != 0 ? 16 : 0)) - m1;
                y[out + 32 + l] = d2 * ((u8(s, q + l) >> 4) + ((h & u2) != 0 ? 16 : 0)) - m2;
            }
            out += 64;
        }
    }

    @Override
    void decodeQuants(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + (long) b * 176;
            row.d[b] = half(s, o);
            row.dmin[b] = half(s, o + 2);
            long qs = o + 48;
            // the sub-block walk of the single-row kernel (small loop bodies keep the JIT within its inlining limits)
            long sLo = s.get(U64, o + 4);
            int sHi = s.get(U32, o + 12);
            long scales = Q4_KKernel.scalesK4(sLo, sHi);
            long mins = Q4_KKernel.minsK4(sLo, sHi);
            for (int j = 0; j < 8; j++) {
                row.sc[b * 8 + j] = k4(scales, j);
                row.m[b * 8 + j] = k4(mins, j);
                long chunk = qs + (j >> 1) * 32L;
                for (int h = 0; h < 32; h += 16) {
                    ByteVector v = ByteVector.fromMemorySegment(B16, s, chunk + h, LE);
                    ByteVector n = nibbles(v, 4 * (j & 1));
                    n = n.or(bitsTo(ByteVector.fromMemorySegment(B16, s, o + 16 + h, LE), j, 1, 4));
                    widen(n).intoArray(row.q, b * 256 + 32 * j + h);
                }
            }
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 176L;
            int e = b * 256;
            row.d[b] = half(s, o);
            row.dmin[b] = half(s, o + 2);
            long qs = o + 48;
            for (int j = 0; j < 4; j++) {
                for (int h = 0; h < 2; h++) {
                    row.sc[b * 8 + 2 * j + h] = Q4_KKernel.scaleK4(s, o + 4, 2 * j + h);
                    row.m[b * 8 + 2 * j + h] = Q4_KKernel.minK4(s, o + 4, 2 * j + h);
                }
                for (int l = 0; l < 32; l++) {
                    int v = u8(s, qs + j * 32L + l);
                    int lo = v & 0xF;
                    int hi = v >> 4;
                    int hb = u8(s, o + 16 + l);
                    lo += ((hb >> (2 * j)) & 1) != 0 ? 16 : 0;
                    hi += ((hb >> (2 * j + 1)) & 1) != 0 ? 16 : 0;
                    row.q[e + 64 * j + l] = (short) (lo);
                    row.q[e + 64 * j + 32 + l] = (short) (hi);
                }
            }
        }
    }

    @Override
    void dotRows(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
        for (int r = r0; r < r1; r++) {
            out[o0 + r] = fused(s, r * stride, cols, x, xRow);
        }
    }

    /**
     * One row. Every vector operation is written out here, none through a helper: C2 stops inlining
     * a method's callees once its parse has made {@code NodeCountInliningCutoff} nodes, except JDK methods marked
     * {@code @ForceInline} (the Vector API's own), which it inlines later instead. This method parses close to that
     * count, and how close depends on the profiles of the code it inlines, i.e. on what ran before (after the Q6_K
     * kernel it passed it): a helper of ours past the cutoff stays a call and the vectors it takes or returns are boxed
     * (about 300 KB allocated per 64-row product, several times slower). Written out, they cannot be refused.
     */
    private static float fused(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        FloatVector acc = FloatVector.zero(F8);
        float corr = 0f;
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 176L;
            IntVector a = IntVector.zero(I8);
            int msum = 0;
            int x32 = xo / 32 + b * 8;
            // the 16-byte header (d, dmin, 12 scale bytes) in two loads
            long h01 = s.get(U64, o);
            long h23 = s.get(U64, o + 8);
            long sLo = (h01 >>> 32) | (h23 << 32);
            int sHi = (int) (h23 >>> 32);
            long scales = Q4_KKernel.scalesK4(sLo, sHi);
            long mins = Q4_KKernel.minsK4(sLo, sHi);
            // the high bits of all eight sub-blocks, loaded once as 16-bit lanes and shifted up by 4, so bit j of qh
            // is bit 4 after a shift by j
            ShortVector h0 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o + 16, LE).convertShape(VectorOperators.B2S, S16, 0))
                    .and((short) 0xFF).lanewise(VectorOperators.LSHL, 4);
            ShortVector h1 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o + 32, LE).convertShape(VectorOperators.B2S, S16, 0))
                    .and((short) 0xFF).lanewise(VectorOperators.LSHL, 4);
            for (int j = 0; j < 8; j++) {
                int e = xo + b * 256 + 32 * j;
                long chunk = o + 48 + (j >> 1) * 32L;
                int shift = 4 * (j & 1);
                // nibbles taken in 16-bit lanes (sign-extended bytes: the mask drops the extension)
                ShortVector w0 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, chunk, LE).convertShape(VectorOperators.B2S, S16, 0))
                        .lanewise(VectorOperators.LSHR, shift).and((short) 15).or(h0.lanewise(VectorOperators.LSHR, j).and((short) 16));
                ShortVector w1 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, chunk + 16, LE).convertShape(VectorOperators.B2S, S16, 0))
                        .lanewise(VectorOperators.LSHR, shift).and((short) 15).or(h1.lanewise(VectorOperators.LSHR, j).and((short) 16));
                IntVector p = w0.mul(ShortVector.fromArray(S16, qx, e)).add(w1.mul(ShortVector.fromArray(S16, qx, e + 16))).reinterpretAsInts();
                // pairSum(p), written out
                IntVector pairs = p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                a = a.add(pairs.mul((int) (scales >>> (8 * j)) & 0xFF));
                msum += ((int) (mins >>> (8 * j)) & 0xFF) * x.sums32[x32 + j];
            }
            float dx = x.d[xo / 256 + b];
            acc = ((FloatVector) a.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F8, Float.float16ToFloat((short) h01) * dx), acc);
            corr += Float.float16ToFloat((short) (h01 >>> 16)) * dx * (float) msum;
        }
        // sum(acc), written out
        float lo = (acc.lane(0) + acc.lane(4)) + (acc.lane(2) + acc.lane(6));
        float hi = (acc.lane(1) + acc.lane(5)) + (acc.lane(3) + acc.lane(7));
        return (lo + hi) - corr;
    }
}
