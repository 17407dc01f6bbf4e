package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.S16;
import static ml.juno.engine.kernel.cpu.QuantLanes.I8;
import static ml.juno.engine.kernel.cpu.QuantLanes.B16;
import static ml.juno.engine.kernel.cpu.QuantLanes.widen;
import static ml.juno.engine.kernel.cpu.QuantLanes.nibbles;
import static ml.juno.engine.kernel.cpu.QuantLanes.k4;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q4_K ({@code block_q4_K}, 144 bytes per 256 weights: F16 {@code d} and {@code dmin}, eight 6-bit scales and mins
 * packed in 12 bytes, 4-bit quants; weight {@code d·sc·q − dmin·m}), against Q8_K activations. Q5_K packs its scales
 * the same way and uses this class's unpacking.
 */
final class Q4_KKernel extends SuperBlockKernel {
    Q4_KKernel() {
        super(GgmlType.Q4_K, 32, true);
    }

    @Override
    void decodeVector(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 256; b++) {
            q4_kVector(s, off + b * 144L, dst, dstOff + b * 256);
        }
    }

    private static void q4_kVector(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        float dmin = half(s, o + 2);
        for (int j = 0; j < 4; j++) {
            long q = o + 16 + j * 32L;
            float d1 = d * scaleK4(s, o + 4, 2 * j);
            float m1 = dmin * minK4(s, o + 4, 2 * j);
            float d2 = d * scaleK4(s, o + 4, 2 * j + 1);
            float m2 = dmin * minK4(s, o + 4, 2 * j + 1);
            int out = d0 + 64 * j;
            for (int l = 0; l < 32; l += L) {
                ByteVector v = ByteVector.fromMemorySegment(B, s, q + l, LE);
                bytesToFloats(v.and((byte) 0xF)).mul(d1).sub(m1).intoArray(y, out + l);
                bytesToFloats(v.lanewise(VectorOperators.LSHR, 4)).mul(d2).sub(m2).intoArray(y, out + 32 + l);
            }
        }
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 256; b++) {
            q4_kBlock(s, off + b * 144L, dst, dstOff + b * 256);
        }
    }

    /** Scale {@code j} (0..7) of the 12 packed scale bytes of a Q4_K or Q5_K super-block at {@code q}. */
    static int scaleK4(MemorySegment s, long q, int j) {
        return j < 4 ? u8(s, q + j) & 63 : (u8(s, q + j + 4) & 0xF) | ((u8(s, q + j - 4) >> 6) << 4);
    }

    /** Min {@code j} (0..7) of the 12 packed scale bytes at {@code q}, as {@link #scaleK4}. */
    static int minK4(MemorySegment s, long q, int j) {
        return j < 4 ? u8(s, q + j + 4) & 63 : (u8(s, q + j + 4) >> 4) | ((u8(s, q + j) >> 6) << 4);
    }

    // block_q4_K: d f16, dmin f16, scales[12], qs[128]
    private static void q4_kBlock(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        float dmin = half(s, o + 2);
        int out = d0;
        for (int j = 0; j < 4; j++) {
            long q = o + 16 + j * 32L;
            float d1 = d * scaleK4(s, o + 4, 2 * j);
            float m1 = dmin * minK4(s, o + 4, 2 * j);
            float d2 = d * scaleK4(s, o + 4, 2 * j + 1);
            float m2 = dmin * minK4(s, o + 4, 2 * j + 1);
            for (int l = 0; l < 32; l++) {
                y[out + l] = d1 * (u8(s, q + l) & 0xF) - m1;
                y[out + 32 + l] = d2 * (u8(s, q + l) >> 4) - m2;
            }
            out += 64;
        }
    }

    /**
     * The eight 6-bit scales of a Q4_K/Q5_K super-block, one per byte, sub-blocks 0..3 in the low int and 4..7 in the
     * high int, from its 12 packed scale bytes read as {@code lo} (bytes 0..7) and {@code hi} (bytes 8..11); the same
     * numbers as {@link #scaleK4}, unpacked with four masks and shifts for all eight at once (per sub-block
     * extraction was measured as a large share of the single-row kernel's time).
     */
    static long scalesK4(long lo, int hi) {
        int lo0 = (int) lo;
        return (lo0 & 0x3F3F3F3FL) | (long) ((hi & 0x0F0F0F0F) | ((lo0 >>> 2) & 0x30303030)) << 32;
    }

    /** The eight 6-bit mins of a Q4_K/Q5_K super-block, packed as {@link #scalesK4} packs the scales (as {@link #minK4}). */
    static long minsK4(long lo, int hi) {
        int lo1 = (int) (lo >>> 32);
        return (lo1 & 0x3F3F3F3FL) | (long) (((hi >>> 4) & 0x0F0F0F0F) | ((lo1 >>> 2) & 0x30303030)) << 32;
    }

    @Override
    void decodeQuants(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + (long) b * 144;
            row.d[b] = half(s, o);
            row.dmin[b] = half(s, o + 2);
            long qs = o + 16;
            // the sub-block walk of the single-row kernel (small loop bodies keep the JIT within its inlining limits)
            long sLo = s.get(U64, o + 4);
            int sHi = s.get(U32, o + 12);
            long scales = scalesK4(sLo, sHi);
            long mins = minsK4(sLo, sHi);
            for (int j = 0; j < 8; j++) {
                row.sc[b * 8 + j] = k4(scales, j);
                row.m[b * 8 + j] = k4(mins, j);
                long chunk = qs + (j >> 1) * 32L;
                for (int h = 0; h < 32; h += 16) {
                    ByteVector v = ByteVector.fromMemorySegment(B16, s, chunk + h, LE);
                    ByteVector n = nibbles(v, 4 * (j & 1));
                    widen(n).intoArray(row.q, b * 256 + 32 * j + h);
                }
            }
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 144L;
            int e = b * 256;
            row.d[b] = half(s, o);
            row.dmin[b] = half(s, o + 2);
            long qs = o + 16;
            for (int j = 0; j < 4; j++) {
                for (int h = 0; h < 2; h++) {
                    row.sc[b * 8 + 2 * j + h] = scaleK4(s, o + 4, 2 * j + h);
                    row.m[b * 8 + 2 * j + h] = minK4(s, o + 4, 2 * j + h);
                }
                for (int l = 0; l < 32; l++) {
                    int v = u8(s, qs + j * 32L + l);
                    int lo = v & 0xF;
                    int hi = v >> 4;
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

    // sub-block j of a super-block: nibbles (low for even j, high for odd) of the 32 bytes of chunk j/2. Vector
    // operations written out, as in Q5_KKernel (see there why).
    private static float fused(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        FloatVector acc = FloatVector.zero(F8);
        float corr = 0f;
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 144L;
            IntVector a = IntVector.zero(I8);
            int msum = 0;
            int x32 = xo / 32 + b * 8;
            // the 16-byte header (d, dmin, 12 scale bytes) in two loads
            long h01 = s.get(U64, o);
            long h23 = s.get(U64, o + 8);
            long sLo = (h01 >>> 32) | (h23 << 32);
            int sHi = (int) (h23 >>> 32);
            long scales = scalesK4(sLo, sHi);
            long mins = minsK4(sLo, sHi);
            for (int j = 0; j < 8; j++) {
                int e = xo + b * 256 + 32 * j;
                long chunk = o + 16 + (j >> 1) * 32L;
                int shift = 4 * (j & 1);
                // nibbles(load16(..), shift) widened, written out
                ByteVector n0 = ByteVector.fromMemorySegment(B16, s, chunk, LE).reinterpretAsShorts()
                        .lanewise(VectorOperators.LSHR, shift).reinterpretAsBytes().and((byte) 0x0F);
                ByteVector n1 = ByteVector.fromMemorySegment(B16, s, chunk + 16, LE).reinterpretAsShorts()
                        .lanewise(VectorOperators.LSHR, shift).reinterpretAsBytes().and((byte) 0x0F);
                IntVector p = ((ShortVector) n0.convertShape(VectorOperators.B2S, S16, 0)).mul(ShortVector.fromArray(S16, qx, e))
                        .add(((ShortVector) n1.convertShape(VectorOperators.B2S, S16, 0)).mul(ShortVector.fromArray(S16, qx, e + 16)))
                        .reinterpretAsInts();
                IntVector pairs = p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                a = a.add(pairs.mul((int) (scales >>> (8 * j)) & 0xFF));
                msum += ((int) (mins >>> (8 * j)) & 0xFF) * x.sums32[x32 + j];
            }
            float dx = x.d[xo / 256 + b];
            acc = ((FloatVector) a.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F8, Float.float16ToFloat((short) h01) * dx), acc);
            corr += Float.float16ToFloat((short) (h01 >>> 16)) * dx * (float) msum;
        }
        float lo = (acc.lane(0) + acc.lane(4)) + (acc.lane(2) + acc.lane(6));
        float hi = (acc.lane(1) + acc.lane(5)) + (acc.lane(3) + acc.lane(7));
        return (lo + hi) - corr;
    }
}
