package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.S16;
import static ml.juno.engine.kernel.cpu.QuantLanes.I8;
import static ml.juno.engine.kernel.cpu.QuantLanes.B16;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q2_K ({@code block_q2_K}, 84 bytes per 256 weights: 16 bytes of 4-bit scale and 4-bit min per 16 weights, 2-bit
 * quants, F16 {@code d} and {@code dmin}; weight {@code d·sc·q − dmin·m}), against Q8_K activations.
 */
final class Q2_KKernel extends SuperBlockKernel {
    Q2_KKernel() {
        super(GgmlType.Q2_K, 16, true);
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 256; b++) {
            q2_kBlock(s, off + b * 84L, dst, dstOff + b * 256);
        }
    }

    // block_q2_K: scales[16] (low nibble scale, high nibble min), qs[64], d f16, dmin f16
    private static void q2_kBlock(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o + 80);
        float dmin = half(s, o + 82);
        int is = 0;
        int out = d0;
        for (int n = 0; n < 2; n++) {
            long q = o + 16 + n * 32L;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; part++) {
                    int sc = u8(s, o + is++);
                    float dl = d * (sc & 0xF);
                    float ml = dmin * (sc >> 4);
                    for (int l = 0; l < 16; l++) {
                        y[out++] = dl * ((u8(s, q + part * 16 + l) >> shift) & 3) - ml;
                    }
                }
            }
        }
    }

    @Override
    void decodeQuants(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 84L;
            int dd = s.get(U32, o + 80);
            row.d[b] = Float.float16ToFloat((short) dd);
            row.dmin[b] = Float.float16ToFloat((short) (dd >>> 16));
            for (int is = 0; is < 16; is++) {
                int scale = u8(s, o + is);
                row.sc[b * 16 + is] = scale & 0xF;
                row.m[b * 16 + is] = scale >> 4;
            }
            for (int n = 0; n < 2; n++) {
                // sign-extended bytes: the mask drops the extension
                ShortVector q0 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 16 + n * 32L, LE)
                        .convertShape(VectorOperators.B2S, S16, 0);
                ShortVector q1 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 32 + n * 32L, LE)
                        .convertShape(VectorOperators.B2S, S16, 0);
                for (int j = 0; j < 4; j++) {
                    int e = b * 256 + 32 * (4 * n + j);
                    q0.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).intoArray(row.q, e);
                    q1.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).intoArray(row.q, e + 16);
                }
            }
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 84L;
            int e = b * 256;
            row.d[b] = half(s, o + 80);
            row.dmin[b] = half(s, o + 82);
            int is = 0;
            for (int n = 0; n < 2; n++) {
                for (int shift = 0; shift < 8; shift += 2) {
                    for (int part = 0; part < 2; part++) {
                        int scale = u8(s, o + is);
                        row.sc[b * 16 + is] = scale & 0xF;
                        row.m[b * 16 + is] = scale >> 4;
                        for (int l = 0; l < 16; l++) {
                            row.q[e + is * 16 + l] = (short) ((u8(s, o + 16 + n * 32 + part * 16 + l) >> shift) & 3);
                        }
                        is++;
                    }
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
     * Q2_K, one row, in {@link #dotFloat}'s lanes: as {@link Q3_KKernel}'s (quants 0..3 times their 4-bit scales in 16-bit
     * lanes), plus the min term {@code dmin·d_x·Σ m_j·bsum_j} per super-block, subtracted at the end as
     * SuperBlockKernel's min term does. Block: scales[16] (scale in the low nibble, min in the high), qs[64] (group 4n+j at
     * bits 2j of bytes 32n..32n+31), d, dmin. Vector operations written out (see {@link Q5_KKernel}).
     */
    private static float fused(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        float[] bsums = x.sums;
        FloatVector acc = FloatVector.zero(F8);
        float corr = 0f;
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 84L;
            long scales0 = s.get(U64, o);     // sub-blocks 0..7
            long scales1 = s.get(U64, o + 8); // 8..15
            int dd = s.get(U32, o + 80);      // d, dmin
            int x16 = xo / 16 + b * 16;
            int msum = 0;
            IntVector a = IntVector.zero(I8);
            for (int n = 0; n < 2; n++) {
                long scales = n == 0 ? scales0 : scales1;
                // sign-extended bytes: the masks below drop the extension
                ShortVector q0 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 16 + n * 32L, LE).convertShape(VectorOperators.B2S, S16, 0);
                ShortVector q1 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 32 + n * 32L, LE).convertShape(VectorOperators.B2S, S16, 0);
                for (int j = 0; j < 4; j++) {
                    int e = xo + b * 256 + 32 * (4 * n + j);
                    int sm0 = (int) (scales >>> (16 * j)) & 0xFF;
                    int sm1 = (int) (scales >>> (16 * j + 8)) & 0xFF;
                    ShortVector w0 = q0.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).mul((short) (sm0 & 0xF));
                    ShortVector w1 = q1.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).mul((short) (sm1 & 0xF));
                    IntVector p = w0.mul(ShortVector.fromArray(S16, qx, e)).add(w1.mul(ShortVector.fromArray(S16, qx, e + 16)))
                            .reinterpretAsInts();
                    a = a.add(p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16)));
                    msum += (sm0 >>> 4) * (int) bsums[x16 + 8 * n + 2 * j] + (sm1 >>> 4) * (int) bsums[x16 + 8 * n + 2 * j + 1];
                }
            }
            float dx = x.d[xo / 256 + b];
            acc = ((FloatVector) a.convert(VectorOperators.I2F, 0)).fma(FloatVector.broadcast(F8, Float.float16ToFloat((short) dd) * dx), acc);
            corr += Float.float16ToFloat((short) (dd >>> 16)) * dx * (float) msum;
        }
        float lo = (acc.lane(0) + acc.lane(4)) + (acc.lane(2) + acc.lane(6));
        float hi = (acc.lane(1) + acc.lane(5)) + (acc.lane(3) + acc.lane(7));
        return (lo + hi) - corr;
    }
}
