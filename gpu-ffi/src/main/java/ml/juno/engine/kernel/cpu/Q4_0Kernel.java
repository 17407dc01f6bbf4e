package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.B16;
import static ml.juno.engine.kernel.cpu.QuantLanes.widen;
import static ml.juno.engine.kernel.cpu.QuantLanes.lowNibbles;
import static ml.juno.engine.kernel.cpu.QuantLanes.highNibbles;
import static ml.juno.engine.kernel.cpu.QuantLanes.pairSum;
import static ml.juno.engine.kernel.cpu.QuantLanes.toFloat;
import static ml.juno.engine.kernel.cpu.QuantLanes.s16;
import static ml.juno.engine.kernel.cpu.QuantLanes.load16;
import static ml.juno.engine.kernel.cpu.QuantLanes.sum;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q4_0 ({@code block_q4_0}, 18 bytes per 32 weights: F16 scale {@code d}, 16 bytes of nibbles; weight {@code (q − 8)·d}),
 * against Q8_0 activations.
 */
final class Q4_0Kernel extends Block32Kernel {
    static final ByteVector EIGHT = ByteVector.broadcast(B16, (byte) 8);

    Q4_0Kernel() {
        super(GgmlType.Q4_0, false);
    }

    @Override
    void decodeVector(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 32; b++) {
            q4_0Vector(s, off + b * 18L, dst, dstOff + b * 32);
        }
    }

    private static void q4_0Vector(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        for (int j = 0; j < 16; j += L) {
            ByteVector q = ByteVector.fromMemorySegment(B, s, o + 2 + j, LE);
            bytesToFloats(q.and((byte) 0xF).sub((byte) 8)).mul(d).intoArray(y, d0 + j);
            bytesToFloats(q.lanewise(VectorOperators.LSHR, 4).sub((byte) 8)).mul(d).intoArray(y, d0 + 16 + j);
        }
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 32; b++) {
            q4_0Block(s, off + b * 18L, dst, dstOff + b * 32);
        }
    }

    // block_q4_0: d f16, qs[16]; element j = low nibble of qs[j], element j+16 = high nibble; value (q-8)·d
    private static void q4_0Block(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        for (int j = 0; j < 16; j++) {
            int q = u8(s, o + 2 + j);
            y[d0 + j] = ((q & 0xF) - 8) * d;
            y[d0 + j + 16] = ((q >> 4) - 8) * d;
        }
    }

    @Override
    void decodeQuants(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 18L;
            row.d[b] = half(s, o);
            ByteVector v = ByteVector.fromMemorySegment(B16, s, o + 2, LE);
            widen(lowNibbles(v).sub(EIGHT)).intoArray(row.q, b * 32);
            widen(highNibbles(v).sub(EIGHT)).intoArray(row.q, b * 32 + 16);
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 18L;
            int e = b * 32;
            row.d[b] = half(s, o);
            for (int j = 0; j < 16; j++) {
                int v = u8(s, o + 2 + j);
                row.q[e + j] = (short) ((v & 0xF) - 8);
                row.q[e + j + 16] = (short) ((v >> 4) - 8);
            }
        }
    }

    @Override
    void dotRows(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
        for (int r = r0; r < r1; r++) {
            out[o0 + r] = fused(s, r * stride, cols, x, xRow);
        }
    }

    private static float fused(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        short[] qx = x.q;
        int xb = xo / 32;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 18L;
            int e = xo + b * 32;
            ByteVector v = load16(s, o + 2);
            ShortVector p = widen(lowNibbles(v).sub(EIGHT)).mul(s16(qx, e))
                    .add(widen(highNibbles(v).sub(EIGHT)).mul(s16(qx, e + 16)));
            acc = toFloat(pairSum(p)).fma(FloatVector.broadcast(F8, half(s, o) * x.d[xb + b]), acc);
        }
        return sum(acc);
    }
}
