package ml.juno.engine.kernel.cpu;

import static ml.juno.engine.kernel.cpu.QuantLanes.F8;
import static ml.juno.engine.kernel.cpu.QuantLanes.I8;
import static ml.juno.engine.kernel.cpu.QuantLanes.toFloat;
import static ml.juno.engine.kernel.cpu.QuantLanes.f8;
import static ml.juno.engine.kernel.cpu.QuantLanes.sum;
import static ml.juno.engine.kernel.cpu.QuantLanes.lanes;
import static ml.juno.engine.kernel.cpu.QuantLanes.store8;
import static ml.juno.engine.kernel.cpu.QuantLanes.sumLanes;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import ml.juno.engine.tensor.GgmlType;

/**
 * The dot products shared by the K-quants of 256-element super-blocks with integer sub-block scales (Q2_K, Q3_K, Q4_K,
 * Q5_K), against Q8_K activations: per super-block the integer sums times their sub-block scales, summed exactly, times
 * {@code d_w·d_x} in one float multiply-add; the min terms ({@code dmin·d_x·Σ m_j·S_j}, Q2_K/Q4_K/Q5_K) summed apart
 * and subtracted at the end. Q6_K keeps ggml's own lanes ({@link Q6_KKernel}). Each type's own class adds its decoders
 * and its single-row kernel.
 */
abstract class SuperBlockKernel extends QuantKernel {
    /** Whether the sub-blocks carry integer mins ({@code dmin·m}, Q2_K/Q4_K/Q5_K). */
    private final boolean mins;

    SuperBlockKernel(GgmlType type, int subBlock, boolean mins) {
        super(type, subBlock);
        this.mins = mins;
    }

    @Override
    void toFloatLanes(QuantRow row) {
        int g = subBlock;
        for (int e = 0; e < row.cols; e += 32) {
            int j = e / g;
            float lo = row.sc[j];
            float hi = g == 16 ? row.sc[j + 1] : lo;
            lanes(row.q, e, row.wf, e, lo, hi);
        }
    }

    @Override
    float dotFloat(QuantRow w, QuantActivations x, int xRow) {
        int cols = w.cols;
        int xo = xRow * cols;
        float[] q = w.wf;
        float[] qx = x.qf;
        FloatVector acc = FloatVector.zero(F8);
        for (int b = 0; b < cols / 256; b++) {
            FloatVector a = FloatVector.zero(F8);
            for (int e = b * 256; e < b * 256 + 256; e += 8) {
                a = f8(q, e).fma(f8(qx, xo + e), a);
            }
            acc = a.fma(FloatVector.broadcast(F8, w.d[b] * x.d[xo / 256 + b]), acc);
        }
        return sum(acc) - kCorrection(w, x, xRow);
    }

    @Override
    void dotFloat4(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0) {
        int cols = w[0].cols;
        int xo = xRow * cols;
        float[] qx = x.qf;
        float[] q0 = w[0].wf;
        float[] q1 = w[1].wf;
        float[] q2 = w[2].wf;
        float[] q3 = w[3].wf;
        FloatVector c0 = FloatVector.zero(F8);
        FloatVector c1 = c0;
        FloatVector c2 = c0;
        FloatVector c3 = c0;
        for (int b = 0; b < cols / 256; b++) {
            FloatVector a0 = FloatVector.zero(F8);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            for (int e = b * 256; e < b * 256 + 256; e += 8) {
                FloatVector xv = f8(qx, xo + e);
                a0 = f8(q0, e).fma(xv, a0);
                a1 = f8(q1, e).fma(xv, a1);
                a2 = f8(q2, e).fma(xv, a2);
                a3 = f8(q3, e).fma(xv, a3);
            }
            float dx = x.d[xo / 256 + b];
            c0 = a0.fma(FloatVector.broadcast(F8, w[0].d[b] * dx), c0);
            c1 = a1.fma(FloatVector.broadcast(F8, w[1].d[b] * dx), c1);
            c2 = a2.fma(FloatVector.broadcast(F8, w[2].d[b] * dx), c2);
            c3 = a3.fma(FloatVector.broadcast(F8, w[3].d[b] * dx), c3);
        }
        out[o0] = sum(c0) - kCorrection(w[0], x, xRow);
        out[o0 + 1] = sum(c1) - kCorrection(w[1], x, xRow);
        out[o0 + 2] = sum(c2) - kCorrection(w[2], x, xRow);
        out[o0 + 3] = sum(c3) - kCorrection(w[3], x, xRow);
    }

    @Override
    int dotTilePairs(QuantRow[] tile, QuantActivations x, int batch, float[] out, int r0, int rows, float[] corr) {
        // the four rows' min terms with every activation row, eight activation rows per vector
        kCorrections(tile, CpuBackend.TILE, x, batch, corr);
        int b = 0;
        for (; b + 1 < batch; b += 2) {
            dotFloat4x2(tile, x, b, out, b * rows + r0, rows, corr, b, batch);
        }
        return b;
    }

    /**
     * {@code corr[t·batch + r]} = {@link #kCorrection} of weight row {@code w[t]} ({@code t < n}) with activation row r,
     * bit-identical to it. For Q4_K/Q5_K eight activation rows at a time: per super-block, eight FMAs over the
     * sub-blocks give the eight rows' {@code Σ_j m_j·S_j} (integers below 2^24, exact in any order), two lane-wise
     * multiplies round {@code dmin·dx·msum} as the scalar expression does, and a lane-wise add accumulates the
     * super-blocks in order. One such term per (row, activation row) and super-block, one reduction each, cost a third
     * of a batched product's time.
     */
    void kCorrections(QuantRow[] w, int n, QuantActivations x, int batch, float[] corr) {
        boolean vector = mins && subBlock == 32;
        float[] sums = x.sumsByRow;
        float[] dx = x.dByRow;
        for (int t = 0; t < n; t++) {
            QuantRow row = w[t];
            int r = 0;
            if (vector) {
                float[] m = row.m;
                int nb = row.cols / 256;
                for (; r + 8 <= batch; r += 8) {
                    FloatVector c = FloatVector.zero(F8);
                    for (int b = 0; b < nb; b++) {
                        int s0 = 8 * b * batch + r;
                        FloatVector ms = f8(sums, s0).mul(m[8 * b]);
                        for (int j = 1; j < 8; j++) {
                            ms = f8(sums, s0 + j * batch).fma(FloatVector.broadcast(F8, m[8 * b + j]), ms);
                        }
                        c = c.add(FloatVector.broadcast(F8, row.dmin[b]).mul(f8(dx, b * batch + r)).mul(ms));
                    }
                    c.intoArray(corr, t * batch + r);
                }
            }
            for (; r < batch; r++) {
                corr[t * batch + r] = kCorrection(row, x, r);
            }
        }
    }

    /**
     * {@link #dotFloat4} of the same four K-quant weight rows with two activation rows ({@code xRow}, {@code xRow + 1};
     * results at {@code out[o0..]} and {@code out[o0 + next..]}): eight independent FMA chains hide the FMA latency and
     * each weight load serves two rows (0.75 loads per FMA). The integer lane sums are exact in any order, so every
     * result is still bit-identical to {@link #dotFloat}. The min terms are given: weight row t with activation row
     * {@code xRow + i} subtracts {@code corr[cAt + t·cStride + i]} ({@link #kCorrections} computes them for a batch).
     */
    void dotFloat4x2(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0, int next,
                     float[] corr, int cAt, int cStride) {
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
        for (int b = 0; b < cols / 256; b++) {
            FloatVector a0 = FloatVector.zero(F8);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            FloatVector b0 = a0;
            FloatVector b1 = a0;
            FloatVector b2 = a0;
            FloatVector b3 = a0;
            for (int e = b * 256; e < b * 256 + 256; e += 8) {
                FloatVector xv = f8(qx, xo + e);
                FloatVector yv = f8(qx, yo + e);
                FloatVector w0 = f8(q0, e);
                FloatVector w1 = f8(q1, e);
                FloatVector w2 = f8(q2, e);
                FloatVector w3 = f8(q3, e);
                a0 = w0.fma(xv, a0);
                a1 = w1.fma(xv, a1);
                a2 = w2.fma(xv, a2);
                a3 = w3.fma(xv, a3);
                b0 = w0.fma(yv, b0);
                b1 = w1.fma(yv, b1);
                b2 = w2.fma(yv, b2);
                b3 = w3.fma(yv, b3);
            }
            float dx = x.d[xo / 256 + b];
            float dy = x.d[yo / 256 + b];
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
            out[o0 + t] = sumLanes(ln, 8 * t) - corr[cAt + t * cStride];
            out[o0 + next + t] = sumLanes(ln, 32 + 8 * t) - corr[cAt + t * cStride + 1];
        }
    }

    /** The K-quant min term of {@link #dotFloat}, summed over the super-blocks in the same order. */
    private float kCorrection(QuantRow w, QuantActivations x, int xRow) {
        if (!mins) {
            return 0f;
        }
        if (subBlock == 32) {
            return kCorrection32(w, x, xRow);
        }
        int xo = xRow * w.cols;
        int g = subBlock;
        int subs = 256 / g;
        float corr = 0f;
        for (int b = 0; b < w.cols / 256; b++) {
            corr += w.dmin[b] * x.d[xo / 256 + b] * minSum(w, x, b, subs, g, xo / 16);
        }
        return corr;
    }

    /**
     * {@link #kCorrection} for Q4_K/Q5_K (eight 32-wide sub-blocks): each super-block's {@code Σ_j m_j·S_j} as one
     * 8-lane product and lane sum. Mins ≤ 63 and sums ≤ 32·127 make every product and partial sum an integer below
     * 2^24, exact in float in any order, so the result equals the integer sum; then the same float expression in the
     * same order as {@link #kCorrection}.
     */
    private static float kCorrection32(QuantRow w, QuantActivations x, int xRow) {
        int xo = xRow * w.cols;
        float[] m = w.m;
        int[] s32 = x.sums32;
        float corr = 0f;
        for (int b = 0; b < w.cols / 256; b++) {
            FloatVector sums = toFloat(IntVector.fromArray(I8, s32, xo / 32 + b * 8));
            float msum = f8(m, b * 8).mul(sums).reduceLanes(VectorOperators.ADD);
            corr += w.dmin[b] * x.d[xo / 256 + b] * msum;
        }
        return corr;
    }

    /** {@code Σ_j m_j · (sum of the activation quants of sub-block j)}: exact integers. */
    private static float minSum(QuantRow w, QuantActivations x, int b, int subs, int g, int xg) {
        int s = 0;
        for (int j = 0; j < subs; j++) {
            int bs = g == 16 ? (int) x.sums[xg + b * 16 + j] : (int) (x.sums[xg + b * 16 + 2 * j] + x.sums[xg + b * 16 + 2 * j + 1]);
            s += (int) w.m[b * subs + j] * bs;
        }
        return s;
    }

    @Override
    float dotScalar(QuantRow w, QuantActivations x, int xRow) {
        int cols = w.cols;
        int xo = xRow * cols;
        float sum = 0f;
        int g = subBlock;
        int subs = 256 / g;
        for (int b = 0; b < cols / 256; b++) {
            int a = 0;
            for (int j = 0; j < subs; j++) {
                int isum = 0;
                int e = b * 256 + j * g;
                for (int i = 0; i < g; i++) {
                    isum += (int) w.q[e + i] * (int) x.q[xo + e + i];
                }
                a += (int) w.sc[b * subs + j] * isum;
            }
            float dx = x.d[xo / 256 + b];
            sum += (w.d[b] * dx) * a;
            if (mins) {
                sum -= w.dmin[b] * dx * minSum(w, x, b, subs, g, xo / 16);
            }
        }
        return sum;
    }
}
