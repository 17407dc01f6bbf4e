package ml.juno.engine.kernel.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import ml.juno.engine.tensor.GgmlType;

/**
 * Dot product of a decoded quantized weight row ({@link QuantRow}) with a quantized activation row
 * ({@link QuantActivations}), in ggml's arrangement: exact integer sums per sub-block, times the integer sub-block scale,
 * summed per super-block, then scaled by {@code d_w·d_x} in float; the min terms are subtracted (K-quants) or added
 * (Q4_1/Q5_1) from integer block sums. Integer partial sums stay below 2^24, so they are exact as floats.
 */
final class QuantDot {
    private static final VectorSpecies<Float> F = VectorDecode.F;
    private static final int L = F.length();

    private QuantDot() {}

    /** Vector path: lanes hold exact integer partial sums; block scales applied per lane with FMA. */
    static float dot(QuantRow w, QuantActivations x, int xRow) {
        GgmlType t = w.type;
        int cols = w.cols;
        int xo = xRow * cols;
        float[] q = w.q;
        float[] qx = x.q;
        FloatVector acc = FloatVector.zero(F);
        float corr = 0f;
        if (!QuantRow.kQuant(t)) {
            int xb = xo / 32;
            boolean mins = t == GgmlType.Q4_1 || t == GgmlType.Q5_1;
            for (int b = 0; b < cols / 32; b++) {
                FloatVector p = FloatVector.zero(F);
                for (int i = 0; i < 32; i += L) {
                    p = FloatVector.fromArray(F, q, b * 32 + i).fma(FloatVector.fromArray(F, qx, xo + b * 32 + i), p);
                }
                acc = p.fma(FloatVector.broadcast(F, w.d[b] * x.d[xb + b]), acc);
                if (mins) {
                    corr += w.m[b] * x.sums[xb + b];
                }
            }
            return Lanes.sum(acc) + corr;
        }
        int g = QuantRow.subBlock(t);
        int subs = 256 / g;
        boolean mins = t == GgmlType.Q2_K || t == GgmlType.Q4_K || t == GgmlType.Q5_K;
        int xs = xo / 256;
        int xg = xo / 16;
        for (int b = 0; b < cols / 256; b++) {
            FloatVector a = FloatVector.zero(F);
            for (int j = 0; j < subs; j++) {
                int e = b * 256 + j * g;
                FloatVector p = FloatVector.zero(F);
                for (int i = 0; i < g; i += L) {
                    p = FloatVector.fromArray(F, q, e + i).fma(FloatVector.fromArray(F, qx, xo + e + i), p);
                }
                a = p.fma(FloatVector.broadcast(F, w.sc[b * subs + j]), a);
            }
            float dx = x.d[xs + b];
            acc = a.fma(FloatVector.broadcast(F, w.d[b] * dx), acc);
            if (mins) {
                corr += w.dmin[b] * dx * minSum(w, x, b, subs, g, xg);
            }
        }
        return Lanes.sum(acc) - corr;
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

    /** Scalar reference: integer sums in {@code int}, one float multiply-add per (super-)block, as ggml's generic code. */
    static float dotScalar(QuantRow w, QuantActivations x, int xRow) {
        GgmlType t = w.type;
        int cols = w.cols;
        int xo = xRow * cols;
        float sum = 0f;
        if (!QuantRow.kQuant(t)) {
            int xb = xo / 32;
            boolean mins = t == GgmlType.Q4_1 || t == GgmlType.Q5_1;
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
        int g = QuantRow.subBlock(t);
        int subs = 256 / g;
        boolean mins = t == GgmlType.Q2_K || t == GgmlType.Q4_K || t == GgmlType.Q5_K;
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
