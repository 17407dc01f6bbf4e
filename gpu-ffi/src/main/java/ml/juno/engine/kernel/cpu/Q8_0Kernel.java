package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.B16;
import static ml.juno.engine.kernel.cpu.QuantLanes.widen;
import static ml.juno.engine.kernel.cpu.QuantLanes.pairSum;
import static ml.juno.engine.kernel.cpu.QuantLanes.toFloat;
import static ml.juno.engine.kernel.cpu.QuantLanes.s16;
import static ml.juno.engine.kernel.cpu.QuantLanes.load16;
import static ml.juno.engine.kernel.cpu.QuantLanes.sum;

import java.lang.foreign.MemorySegment;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import ml.juno.engine.tensor.GgmlType;

/** Q8_0 ({@code block_q8_0}, 34 bytes per 32 weights: F16 scale {@code d}, 32 signed bytes), against Q8_0 activations. */
final class Q8_0Kernel extends Block32Kernel {
    Q8_0Kernel() {
        super(GgmlType.Q8_0, false);
    }

    @Override
    void decodeVector(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 32; b++) {
            q8_0Vector(s, off + b * 34L, dst, dstOff + b * 32);
        }
    }

    private static void q8_0Vector(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        for (int j = 0; j < 32; j += L) {
            bytesToFloats(ByteVector.fromMemorySegment(B, s, o + 2 + j, LE)).mul(d).intoArray(y, d0 + j);
        }
    }

    @Override
    void decodeScalar(MemorySegment s, long off, float[] dst, int dstOff, int count) {
        for (int b = 0; b < count / 32; b++) {
            q8_0Block(s, off + b * 34L, dst, dstOff + b * 32);
        }
    }

    // block_q8_0: d f16, qs[32] int8
    private static void q8_0Block(MemorySegment s, long o, float[] y, int d0) {
        float d = half(s, o);
        for (int j = 0; j < 32; j++) {
            y[d0 + j] = i8(s, o + 2 + j) * d;
        }
    }

    @Override
    void decodeQuants(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 34L;
            row.d[b] = half(s, o);
            widen(ByteVector.fromMemorySegment(B16, s, o + 2, LE)).intoArray(row.q, b * 32);
            widen(ByteVector.fromMemorySegment(B16, s, o + 18, LE)).intoArray(row.q, b * 32 + 16);
        }
    }

    @Override
    void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols) {
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 34L;
            int e = b * 32;
            row.d[b] = half(s, o);
            for (int j = 0; j < 32; j++) {
                row.q[e + j] = (short) (i8(s, o + 2 + j));
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
            long o = off + b * 34L;
            int e = xo + b * 32;
            ShortVector p = widen(load16(s, o + 2)).mul(s16(qx, e)).add(widen(load16(s, o + 18)).mul(s16(qx, e + 16)));
            acc = toFloat(pairSum(p)).fma(FloatVector.broadcast(F8, half(s, o) * x.d[xb + b]), acc);
        }
        return sum(acc);
    }
}
