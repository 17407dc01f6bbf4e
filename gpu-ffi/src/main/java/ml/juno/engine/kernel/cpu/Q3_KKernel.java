package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.S16;
import static ml.juno.engine.kernel.cpu.QuantLanes.I8;
import static ml.juno.engine.kernel.cpu.QuantLanes.B16;
import static ml.juno.engine.kernel.cpu.QuantLanes.k4;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q3_K ({@code block_q3_K}, 110 bytes per 256 weights: the high bit of every quant in {@code hmask[32]}, 2-bit low
 * quants, 16 six-bit scales packed in 12 bytes, F16 {@code d}; weight {@code d·(sc − 32)·(q − 4·!hbit)}), against Q8_K
 * activations.
 */
final class Q3_KKernel extends SuperBlockKernel {
    Q3_KKernel() {
        super(GgmlType.Q3_K, 16, false);
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 256; b++) {
            q3_kBlock(s, off + b * 110L, dst, dstOff + b * 256);
        }
    }

    /** Six-bit scale {@code j} (0..15) of a Q3_K block, unpacked from its 12 bytes, with the −32 offset applied. */
    static int q3kScale(MemorySegment s, long scalesOff, int j) {
        int low = j < 8 ? (u8(s, scalesOff + j) & 0xF) : (u8(s, scalesOff + j - 8) >> 4);
        int high = (u8(s, scalesOff + 8 + (j & 3)) >> (2 * (j >> 2))) & 3;
        return (low | (high << 4)) - 32;
    }

    // block_q3_K: hmask[32], qs[64], scales[12], d f16
    private static void q3_kBlock(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o + 108);
        int is = 0;
        int out = d0;
        int m = 1;
        for (int n = 0; n < 2; n++) {
            long q = o + 32 + n * 32L;
            for (int shift = 0; shift < 8; shift += 2) {
                for (int part = 0; part < 2; part++) {
                    float dl = d * q3kScale(s, o + 96, is++);
                    for (int l = 0; l < 16; l++) {
                        int hm = u8(s, o + part * 16 + l);
                        int v = ((u8(s, q + part * 16 + l) >> shift) & 3) - ((hm & m) != 0 ? 0 : 4);
                        y[out++] = dl * v;
                    }
                }
                m <<= 1;
            }
        }
    }

    /**
     * Eight of the 16 six-bit scales of a Q3_K super-block (before the −32), one per byte: sub-blocks 0..7 for
     * {@code half} 0, 8..15 for 1, from its 12 packed scale bytes read as {@code lo} (bytes 0..7) and {@code hi} (bytes
     * 8..11). The same numbers as {@link #q3kScale} + 32, unpacked four at a time with masks and shifts.
     */
    static long q3Scales(long lo, int hi, int half) {
        int a = (int) lo;
        int b = (int) (lo >>> 32);
        int shift = 4 * half;
        int first = ((a >> shift) & 0x0F0F0F0F) | (((hi >> shift) & 0x03030303) << 4);
        int second = ((b >> shift) & 0x0F0F0F0F) | (((hi >> (shift + 2)) & 0x03030303) << 4);
        return (first & 0xFFFFFFFFL) | (long) second << 32;
    }

    @Override
    void decodeQuants(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 110L;
            long l0 = s.get(U64, o + 96);
            long l1 = s.get(U64, o + 102);
            int hi = (int) (l1 >>> 16);
            row.d[b] = Float.float16ToFloat((short) (l1 >>> 48));
            long scales0 = q3Scales(l0, hi, 0);
            long scales1 = q3Scales(l0, hi, 1);
            for (int j = 0; j < 8; j++) {
                row.sc[b * 16 + j] = k4(scales0, j) - 32;
                row.sc[b * 16 + 8 + j] = k4(scales1, j) - 32;
            }
            ShortVector h0 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o, LE)
                    .convertShape(VectorOperators.B2S, S16, 0)).and((short) 0xFF).lanewise(VectorOperators.LSHL, 2);
            ShortVector h1 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o + 16, LE)
                    .convertShape(VectorOperators.B2S, S16, 0)).and((short) 0xFF).lanewise(VectorOperators.LSHL, 2);
            for (int n = 0; n < 2; n++) {
                ShortVector q0 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 32 + n * 32L, LE)
                        .convertShape(VectorOperators.B2S, S16, 0);
                ShortVector q1 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 48 + n * 32L, LE)
                        .convertShape(VectorOperators.B2S, S16, 0);
                for (int j = 0; j < 4; j++) {
                    int g = 4 * n + j;
                    int e = b * 256 + 32 * g;
                    q0.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).or(h0.lanewise(VectorOperators.LSHR, g).and((short) 4))
                            .sub((short) 4).intoArray(row.q, e);
                    q1.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3).or(h1.lanewise(VectorOperators.LSHR, g).and((short) 4))
                            .sub((short) 4).intoArray(row.q, e + 16);
                }
            }
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 110L;
            int e = b * 256;
            row.d[b] = half(s, o + 108);
            int is = 0;
            int mask = 1;
            for (int n = 0; n < 2; n++) {
                for (int shift = 0; shift < 8; shift += 2) {
                    for (int part = 0; part < 2; part++) {
                        row.sc[b * 16 + is] = q3kScale(s, o + 96, is);
                        for (int l = 0; l < 16; l++) {
                            int hm = u8(s, o + part * 16 + l);
                            row.q[e + is * 16 + l] = (short) (((u8(s, o + 32 + n * 32 + part * 16 + l) >> shift) & 3) - ((hm & mask) != 0 ? 0 : 4));
                        }
                        is++;
                    }
                    mask <<= 1;
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
     * Q3_K, one row, in {@link #dotFloat}'s lanes: the quants of sub-blocks 2g and 2g+1 (16 each) times their scales in
     * 16-bit lanes (|q·sc| ≤ 128, times |x| ≤ 127, two such sums stay within a short), adjacent products summed into
     * 32-bit lanes, one float multiply-add per super-block. Vector operations written out (see {@link Q5_KKernel}).
     * Block: hmask[32] (bit g of byte l: the high bit of element l, or 16+l, of group g), qs[64] (2 bits per element,
     * group 4n+j at bits 2j of bytes 32n..32n+31), scales[12], d.
     */
    private static float fused(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 110L;
            long l0 = s.get(U64, o + 96);  // scale bytes 0..7
            long l1 = s.get(U64, o + 102); // scale bytes 6..11, then d: stays inside the 110-byte block
            int hi = (int) (l1 >>> 16);
            // scales first: a call parsed early is inlined, one parsed near C2's node cutoff may stay a call
            long scales0 = q3Scales(l0, hi, 0);
            long scales1 = q3Scales(l0, hi, 1);
            // the high bits of every group, as 16-bit lanes shifted up by 2: bit g lands on bit 2 after a shift by g
            ShortVector h0 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o, LE).convertShape(VectorOperators.B2S, S16, 0))
                    .and((short) 0xFF).lanewise(VectorOperators.LSHL, 2);
            ShortVector h1 = ((ShortVector) ByteVector.fromMemorySegment(B16, s, o + 16, LE).convertShape(VectorOperators.B2S, S16, 0))
                    .and((short) 0xFF).lanewise(VectorOperators.LSHL, 2);
            IntVector a = IntVector.zero(I8);
            for (int n = 0; n < 2; n++) {
                long scales = n == 0 ? scales0 : scales1;
                // sign-extended bytes: the masks below drop the extension
                ShortVector q0 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 32 + n * 32L, LE).convertShape(VectorOperators.B2S, S16, 0);
                ShortVector q1 = (ShortVector) ByteVector.fromMemorySegment(B16, s, o + 48 + n * 32L, LE).convertShape(VectorOperators.B2S, S16, 0);
                for (int j = 0; j < 4; j++) {
                    int g = 4 * n + j;
                    int e = xo + b * 256 + 32 * g;
                    short sc0 = (short) (((int) (scales >>> (16 * j)) & 0xFF) - 32);
                    short sc1 = (short) (((int) (scales >>> (16 * j + 8)) & 0xFF) - 32);
                    ShortVector w0 = q0.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3)
                            .or(h0.lanewise(VectorOperators.LSHR, g).and((short) 4)).sub((short) 4).mul(sc0);
                    ShortVector w1 = q1.lanewise(VectorOperators.LSHR, 2 * j).and((short) 3)
                            .or(h1.lanewise(VectorOperators.LSHR, g).and((short) 4)).sub((short) 4).mul(sc1);
                    IntVector p = w0.mul(ShortVector.fromArray(S16, qx, e)).add(w1.mul(ShortVector.fromArray(S16, qx, e + 16)))
                            .reinterpretAsInts();
                    a = a.add(p.lanewise(VectorOperators.ASHR, 16).add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16)));
                }
            }
            acc = ((FloatVector) a.convert(VectorOperators.I2F, 0))
                    .fma(FloatVector.broadcast(F8, Float.float16ToFloat((short) (l1 >>> 48)) * x.d[xo / 256 + b]), acc);
        }
        float lo = (acc.lane(0) + acc.lane(4)) + (acc.lane(2) + acc.lane(6));
        float hi = (acc.lane(1) + acc.lane(5)) + (acc.lane(3) + acc.lane(7));
        return lo + hi;
    }
}
