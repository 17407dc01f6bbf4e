package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.f8;
import static ml.juno.engine.kernel.cpu.QuantLanes.sum;
import static ml.juno.engine.kernel.cpu.QuantLanes.lanes;
import static ml.juno.engine.kernel.cpu.QuantLanes.store8;
import static ml.juno.engine.kernel.cpu.QuantLanes.sumLanes;

import jdk.incubator.vector.FloatVector;
import ml.juno.engine.tensor.GgmlType;

/**
 * The dot products shared by the types of 32-element blocks with one F16 scale each (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0),
 * against Q8_0 (Q8_1 for the types with a min) activation blocks: per block the exact integer sum, times
 * {@code d_w·d_x} in one float multiply-add; the min terms ({@code m·s_x}, Q4_1/Q5_1) summed apart and added at the end.
 * Each type's own class adds its decoders and, where it has one, its single-row kernel.
 */
abstract class Block32Kernel extends QuantKernel {
    /** Whether the blocks carry a min ({@code m}, Q4_1/Q5_1), added with the activation block sums of Q8_1. */
    private final boolean mins;

    Block32Kernel(GgmlType type, boolean mins) {
        super(type, 32);
        this.mins = mins;
    }

    @Override
    void toFloatLanes(QuantRow row) {
        for (int e = 0; e < row.cols; e += 32) {
            lanes(row.q, e, row.wf, e, 1f, 1f);
        }
    }

    @Override
    float dotFloat(QuantRow w, QuantActivations x, int xRow) {
        int cols = w.cols;
        int xo = xRow * cols;
        float[] q = w.wf;
        float[] qx = x.qf;
        FloatVector acc = FloatVector.zero(F8);
        int xb = xo / 32;
        for (int b = 0; b < cols / 32; b++) {
            int e = b * 32;
            FloatVector p = f8(q, e).mul(f8(qx, xo + e));
            p = f8(q, e + 8).fma(f8(qx, xo + e + 8), p);
            p = f8(q, e + 16).fma(f8(qx, xo + e + 16), p);
            p = f8(q, e + 24).fma(f8(qx, xo + e + 24), p);
            acc = p.fma(FloatVector.broadcast(F8, w.d[b] * x.d[xb + b]), acc);
        }
        return sum(acc) + legacyCorrection(w, x, xRow);
    }

    @Override
    void dotFloat4(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0) {
        int cols = w[0].cols;
        int xo = xRow * cols;
        int xb = xo / 32;
        float[] qx = x.qf;
        float[] q0 = w[0].wf;
        float[] q1 = w[1].wf;
        float[] q2 = w[2].wf;
        float[] q3 = w[3].wf;
        FloatVector c0 = FloatVector.zero(F8);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        for (int b = 0; b < cols / 32; b++) {
            int e = b * 32;
            FloatVector x0 = f8(qx, xo + e);
            FloatVector p0 = f8(q0, e).mul(x0);
            FloatVector p1 = f8(q1, e).mul(x0);
            FloatVector p2 = f8(q2, e).mul(x0);
            FloatVector p3 = f8(q3, e).mul(x0);
            for (int i = 8; i < 32; i += 8) {
                FloatVector xv = f8(qx, xo + e + i);
                p0 = f8(q0, e + i).fma(xv, p0);
                p1 = f8(q1, e + i).fma(xv, p1);
                p2 = f8(q2, e + i).fma(xv, p2);
                p3 = f8(q3, e + i).fma(xv, p3);
            }
            float dx = x.d[xb + b];
            c0 = p0.fma(FloatVector.broadcast(F8, w[0].d[b] * dx), c0);
            c1 = p1.fma(FloatVector.broadcast(F8, w[1].d[b] * dx), c1);
            c2 = p2.fma(FloatVector.broadcast(F8, w[2].d[b] * dx), c2);
            c3 = p3.fma(FloatVector.broadcast(F8, w[3].d[b] * dx), c3);
        }
        out[o0] = sum(c0) + legacyCorrection(w[0], x, xRow);
        out[o0 + 1] = sum(c1) + legacyCorrection(w[1], x, xRow);
        out[o0 + 2] = sum(c2) + legacyCorrection(w[2], x, xRow);
        out[o0 + 3] = sum(c3) + legacyCorrection(w[3], x, xRow);
    }

    @Override
    int dotTilePairs(QuantRow[] tile, QuantActivations x, int batch, float[] out, int r0, int rows, float[] corr) {
        int b = 0;
        for (; b + 1 < batch; b += 2) {
            dotFloat4x2(tile, x, b, out, b * rows + r0, rows);
        }
        return b;
    }

    /**
     * {@link #dotFloat4} of the same four weight rows with two activation rows ({@code xRow}, {@code xRow + 1}; results
     * at {@code out[o0..]} and {@code out[o0 + next..]}): eight independent FMA chains hide the FMA latency and each
     * weight load serves two rows (0.75 loads per FMA). The integer lane sums are exact in any order, so every result is
     * still bit-identical to {@link #dotFloat}.
     */
    // A near-copy of SuperBlockKernel.dotFloat4x2 on purpose (as dotFloat4 is of its dotFloat4): sharing the FMA block
    // through a helper would pass vectors across a call, which boxes them unless C2 inlines it, and these methods are
    // near its inlining limit.
    void dotFloat4x2(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0, int next) {
        int cols = w[0].cols;
        int xo = xRow * cols;
        int yo = xo + cols;
        float[] qx = x.qf;
        float[] q0 = w[0].wf;
        float[] q1 = w[1].wf;
        float[] q2 = w[2].wf;
        float[] q3 = w[3].wf;
        FloatVector c0 = FloatVector.zero(F8);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        FloatVector d0 = c0;
        FloatVector d1 = c0;
        FloatVector d2 = c0;
        FloatVector d3 = c0;
        for (int b = 0; b < cols / 32; b++) {
            int e = b * 32;
            FloatVector a0 = FloatVector.zero(F8);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            FloatVector b0 = a0;
            FloatVector b1 = a0;
            FloatVector b2 = a0;
            FloatVector b3 = a0;
            for (int i = 0; i < 32; i += 8) {
                FloatVector xv = f8(qx, xo + e + i);
                FloatVector yv = f8(qx, yo + e + i);
                FloatVector w0 = f8(q0, e + i);
                FloatVector w1 = f8(q1, e + i);
                FloatVector w2 = f8(q2, e + i);
                FloatVector w3 = f8(q3, e + i);
                a0 = w0.fma(xv, a0);
                a1 = w1.fma(xv, a1);
                a2 = w2.fma(xv, a2);
                a3 = w3.fma(xv, a3);
                b0 = w0.fma(yv, b0);
                b1 = w1.fma(yv, b1);
                b2 = w2.fma(yv, b2);
                b3 = w3.fma(yv, b3);
            }
            float dx = x.d[xo / 32 + b];
            float dy = x.d[yo / 32 + b];
            c0 = a0.fma(FloatVector.broadcast(F8, w[0].d[b] * dx), c0);
            c1 = a1.fma(FloatVector.broadcast(F8, w[1].d[b] * dx), c1);
            c2 = a2.fma(FloatVector.broadcast(F8, w[2].d[b] * dx), c2);
            c3 = a3.fma(FloatVector.broadcast(F8, w[3].d[b] * dx), c3);
            d0 = b0.fma(FloatVector.broadcast(F8, w[0].d[b] * dy), d0);
            d1 = b1.fma(FloatVector.broadcast(F8, w[1].d[b] * dy), d1);
            d2 = b2.fma(FloatVector.broadcast(F8, w[2].d[b] * dy), d2);
            d3 = b3.fma(FloatVector.broadcast(F8, w[3].d[b] * dy), d3);
        }
        float[] ln = w[0].lanes;
        store8(ln, c0, c1, c2, c3, d0, d1, d2, d3);
        for (int t = 0; t < 4; t++) {
            out[o0 + t] = sumLanes(ln, 8 * t) + legacyCorrection(w[t], x, xRow);
            out[o0 + next + t] = sumLanes(ln, 32 + 8 * t) + legacyCorrection(w[t], x, xRow + 1);
        }
    }

    /** The Q4_1/Q5_1 min term of {@link #dotFloat}, summed over the blocks in the same order. */
    private float legacyCorrection(QuantRow w, QuantActivations x, int xRow) {
        if (!mins) {
            return 0f;
        }
        int xb = xRow * w.cols / 32;
        float corr = 0f;
        for (int b = 0; b < w.cols / 32; b++) {
            corr += w.m[b] * x.sums[xb + b];
        }
        return corr;
    }

    @Override
    float dotScalar(QuantRow w, QuantActivations x, int xRow) {
        int cols = w.cols;
        int xo = xRow * cols;
        float sum = 0f;
        int xb = xo / 32;
        for (int b = 0; b < cols / 32; b++) {
            int isum = 0;
            for (int i = 0; i < 32; i++) {
                isum += (int) w.q[b * 32 + i] * (int) x.q[xo + b * 32 + i];
            }
            sum += isum * (w.d[b] * x.d[xb + b]);
            if (mins) {
                sum += w.m[b] * x.sums[xb + b];
            }
        }
        return sum;
    }
}
