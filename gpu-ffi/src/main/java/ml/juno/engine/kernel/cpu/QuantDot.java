package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
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
        return QuantRow.kQuant(w.type) ? dotK(w, x, xRow) : dotLegacy(w, x, xRow);
    }

    private static float dotLegacy(QuantRow w, QuantActivations x, int xRow) {
        GgmlType t = w.type;
        int cols = w.cols;
        int xo = xRow * cols;
        float[] q = w.q;
        float[] qx = x.q;
        FloatVector acc = FloatVector.zero(F);
        float corr = 0f;
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

    private static float dotK(QuantRow w, QuantActivations x, int xRow) {
        GgmlType t = w.type;
        int cols = w.cols;
        int xo = xRow * cols;
        float[] q = w.q;
        float[] qx = x.q;
        FloatVector acc = FloatVector.zero(F);
        float corr = 0f;
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

    /**
     * Four weight rows against one activation row, sharing each activation load; every row's operations and their
     * order are those of {@link #dot}, so the four results are bit-identical to four {@code dot} calls.
     */
    static void dot4(QuantRow[] w, QuantActivations x, int xRow, float[] out, int oo) {
        if (QuantRow.kQuant(w[0].type)) {
            dot4K(w, x, xRow, out, oo);
        } else {
            dot4Legacy(w, x, xRow, out, oo);
        }
    }

    private static void dot4Legacy(QuantRow[] w, QuantActivations x, int xRow, float[] out, int oo) {
        GgmlType t = w[0].type;
        int cols = w[0].cols;
        int xo = xRow * cols;
        float[] qx = x.q;
        float[] q0 = w[0].q;
        float[] q1 = w[1].q;
        float[] q2 = w[2].q;
        float[] q3 = w[3].q;
        FloatVector c0 = FloatVector.zero(F);
        FloatVector c1 = FloatVector.zero(F);
        FloatVector c2 = FloatVector.zero(F);
        FloatVector c3 = FloatVector.zero(F);
        int xb = xo / 32;
        boolean mins = t == GgmlType.Q4_1 || t == GgmlType.Q5_1;
        float k0 = 0f;
        float k1 = 0f;
        float k2 = 0f;
        float k3 = 0f;
        for (int b = 0; b < cols / 32; b++) {
            FloatVector p0 = FloatVector.zero(F);
            FloatVector p1 = FloatVector.zero(F);
            FloatVector p2 = FloatVector.zero(F);
            FloatVector p3 = FloatVector.zero(F);
            for (int i = 0; i < 32; i += L) {
                int e = b * 32 + i;
                FloatVector xv = FloatVector.fromArray(F, qx, xo + e);
                p0 = FloatVector.fromArray(F, q0, e).fma(xv, p0);
                p1 = FloatVector.fromArray(F, q1, e).fma(xv, p1);
                p2 = FloatVector.fromArray(F, q2, e).fma(xv, p2);
                p3 = FloatVector.fromArray(F, q3, e).fma(xv, p3);
            }
            float dx = x.d[xb + b];
            c0 = p0.fma(FloatVector.broadcast(F, w[0].d[b] * dx), c0);
            c1 = p1.fma(FloatVector.broadcast(F, w[1].d[b] * dx), c1);
            c2 = p2.fma(FloatVector.broadcast(F, w[2].d[b] * dx), c2);
            c3 = p3.fma(FloatVector.broadcast(F, w[3].d[b] * dx), c3);
            if (mins) {
                float sx = x.sums[xb + b];
                k0 += w[0].m[b] * sx;
                k1 += w[1].m[b] * sx;
                k2 += w[2].m[b] * sx;
                k3 += w[3].m[b] * sx;
            }
        }
        out[oo] = Lanes.sum(c0) + k0;
        out[oo + 1] = Lanes.sum(c1) + k1;
        out[oo + 2] = Lanes.sum(c2) + k2;
        out[oo + 3] = Lanes.sum(c3) + k3;
    }

    private static void dot4K(QuantRow[] w, QuantActivations x, int xRow, float[] out, int oo) {
        GgmlType t = w[0].type;
        int cols = w[0].cols;
        int xo = xRow * cols;
        float[] qx = x.q;
        float[] q0 = w[0].q;
        float[] q1 = w[1].q;
        float[] q2 = w[2].q;
        float[] q3 = w[3].q;
        FloatVector c0 = FloatVector.zero(F);
        FloatVector c1 = FloatVector.zero(F);
        FloatVector c2 = FloatVector.zero(F);
        FloatVector c3 = FloatVector.zero(F);
        int g = QuantRow.subBlock(t);
        int subs = 256 / g;
        boolean mins = t == GgmlType.Q2_K || t == GgmlType.Q4_K || t == GgmlType.Q5_K;
        int xs = xo / 256;
        int xg = xo / 16;
        float k0 = 0f;
        float k1 = 0f;
        float k2 = 0f;
        float k3 = 0f;
        for (int b = 0; b < cols / 256; b++) {
            FloatVector a0 = FloatVector.zero(F);
            FloatVector a1 = FloatVector.zero(F);
            FloatVector a2 = FloatVector.zero(F);
            FloatVector a3 = FloatVector.zero(F);
            for (int j = 0; j < subs; j++) {
                int e0 = b * 256 + j * g;
                FloatVector p0 = FloatVector.zero(F);
                FloatVector p1 = FloatVector.zero(F);
                FloatVector p2 = FloatVector.zero(F);
                FloatVector p3 = FloatVector.zero(F);
                for (int i = 0; i < g; i += L) {
                    int e = e0 + i;
                    FloatVector xv = FloatVector.fromArray(F, qx, xo + e);
                    p0 = FloatVector.fromArray(F, q0, e).fma(xv, p0);
                    p1 = FloatVector.fromArray(F, q1, e).fma(xv, p1);
                    p2 = FloatVector.fromArray(F, q2, e).fma(xv, p2);
                    p3 = FloatVector.fromArray(F, q3, e).fma(xv, p3);
                }
                int si = b * subs + j;
                a0 = p0.fma(FloatVector.broadcast(F, w[0].sc[si]), a0);
                a1 = p1.fma(FloatVector.broadcast(F, w[1].sc[si]), a1);
                a2 = p2.fma(FloatVector.broadcast(F, w[2].sc[si]), a2);
                a3 = p3.fma(FloatVector.broadcast(F, w[3].sc[si]), a3);
            }
            float dx = x.d[xs + b];
            c0 = a0.fma(FloatVector.broadcast(F, w[0].d[b] * dx), c0);
            c1 = a1.fma(FloatVector.broadcast(F, w[1].d[b] * dx), c1);
            c2 = a2.fma(FloatVector.broadcast(F, w[2].d[b] * dx), c2);
            c3 = a3.fma(FloatVector.broadcast(F, w[3].d[b] * dx), c3);
            if (mins) {
                k0 += w[0].dmin[b] * dx * minSum(w[0], x, b, subs, g, xg);
                k1 += w[1].dmin[b] * dx * minSum(w[1], x, b, subs, g, xg);
                k2 += w[2].dmin[b] * dx * minSum(w[2], x, b, subs, g, xg);
                k3 += w[3].dmin[b] * dx * minSum(w[3], x, b, subs, g, xg);
            }
        }
        out[oo] = Lanes.sum(c0) - k0;
        out[oo + 1] = Lanes.sum(c1) - k1;
        out[oo + 2] = Lanes.sum(c2) - k2;
        out[oo + 3] = Lanes.sum(c3) - k3;
    }

    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;
    /**
     * The fused single-row path measured slower than decode-then-dot on this JDK (2.6 vs 1.4 ms for a 2048² Q8_0
     * matvec), so it is opt-in ({@code -Djuno.fused=true}) until its compiled code is understood; it stays tested for
     * bit-identity.
     */
    private static final boolean FUSED = Boolean.getBoolean("juno.fused");

    /** Whether the matmul uses {@link #dotFused} for single rows of this type. */
    static boolean fusedEnabled(GgmlType t) {
        return FUSED && fusedSupports(t);
    }

    /** Types {@link #dotFused} handles. */
    static boolean fusedSupports(GgmlType t) {
        return (L == 8 || L == 16) && (t == GgmlType.Q4_0 || t == GgmlType.Q8_0 || t == GgmlType.Q4_K || t == GgmlType.Q6_K);
    }

    private static FloatVector widen(ByteVector v) {
        return (FloatVector) v.convertShape(VectorOperators.B2F, F, 0);
    }

    /**
     * Single-row dot straight from the mapped blocks: quants are widened in registers and multiplied at once, with the
     * same lanes, operations and order as decoding to a {@link QuantRow} and calling {@link #dot}, so the result is
     * bit-identical to it (decode-then-dot serves batches, this serves single rows).
     */
    static float dotFused(GgmlType t, MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        return switch (t) {
            case Q4_0 -> fusedQ4_0(s, off, cols, x, xRow);
            case Q8_0 -> fusedQ8_0(s, off, cols, x, xRow);
            case Q4_K -> fusedQ4_K(s, off, cols, x, xRow);
            case Q6_K -> fusedQ6_K(s, off, cols, x, xRow);
            default -> throw new IllegalArgumentException("no fused dot for " + t);
        };
    }

    private static float fusedQ4_0(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        float[] qx = x.q;
        int xb = xo / 32;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 18L;
            FloatVector p = FloatVector.zero(F);
            int e = xo + b * 32;
            for (int i = 0; i < 16; i += L) {
                ByteVector v = ByteVector.fromMemorySegment(VectorDecode.B, s, o + 2 + i, LE);
                p = widen(v.and((byte) 0xF).sub((byte) 8)).fma(FloatVector.fromArray(F, qx, e + i), p);
            }
            for (int i = 0; i < 16; i += L) {
                ByteVector v = ByteVector.fromMemorySegment(VectorDecode.B, s, o + 2 + i, LE);
                p = widen(v.lanewise(VectorOperators.LSHR, 4).sub((byte) 8)).fma(FloatVector.fromArray(F, qx, e + 16 + i), p);
            }
            acc = p.fma(FloatVector.broadcast(F, ScalarDecode.half(s, o) * x.d[xb + b]), acc);
        }
        return Lanes.sum(acc);
    }

    private static float fusedQ8_0(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        float[] qx = x.q;
        int xb = xo / 32;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < cols / 32; b++) {
            long o = off + b * 34L;
            FloatVector p = FloatVector.zero(F);
            for (int i = 0; i < 32; i += L) {
                p = widen(ByteVector.fromMemorySegment(VectorDecode.B, s, o + 2 + i, LE))
                        .fma(FloatVector.fromArray(F, qx, xo + b * 32 + i), p);
            }
            acc = p.fma(FloatVector.broadcast(F, ScalarDecode.half(s, o) * x.d[xb + b]), acc);
        }
        return Lanes.sum(acc);
    }

    private static float fusedQ4_K(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        float[] qx = x.q;
        FloatVector acc = FloatVector.zero(F);
        float corr = 0f;
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 144L;
            FloatVector a = FloatVector.zero(F);
            int msum = 0;
            for (int jj = 0; jj < 4; jj++) {
                long qs = o + 16 + jj * 32L;
                int e = xo + b * 256 + jj * 64;
                FloatVector pl = FloatVector.zero(F);
                FloatVector ph = FloatVector.zero(F);
                for (int i = 0; i < 32; i += L) {
                    ByteVector v = ByteVector.fromMemorySegment(VectorDecode.B, s, qs + i, LE);
                    pl = widen(v.and((byte) 0xF)).fma(FloatVector.fromArray(F, qx, e + i), pl);
                    ph = widen(v.lanewise(VectorOperators.LSHR, 4)).fma(FloatVector.fromArray(F, qx, e + 32 + i), ph);
                }
                a = pl.fma(FloatVector.broadcast(F, (float) ScalarDecode.scaleK4(s, o + 4, 2 * jj)), a);
                a = ph.fma(FloatVector.broadcast(F, (float) ScalarDecode.scaleK4(s, o + 4, 2 * jj + 1)), a);
                int g = xo / 16 + b * 16 + 4 * jj;
                msum += ScalarDecode.minK4(s, o + 4, 2 * jj) * (int) (x.sums[g] + x.sums[g + 1]);
                msum += ScalarDecode.minK4(s, o + 4, 2 * jj + 1) * (int) (x.sums[g + 2] + x.sums[g + 3]);
            }
            float dx = x.d[xo / 256 + b];
            acc = a.fma(FloatVector.broadcast(F, ScalarDecode.half(s, o) * dx), acc);
            corr += ScalarDecode.half(s, o + 2) * dx * (float) msum;
        }
        return Lanes.sum(acc) - corr;
    }

    private static float fusedQ6_K(MemorySegment s, long off, int cols, QuantActivations x, int xRow) {
        int xo = xRow * cols;
        float[] qx = x.q;
        FloatVector acc = FloatVector.zero(F);
        for (int b = 0; b < cols / 256; b++) {
            long o = off + b * 210L;
            FloatVector a = FloatVector.zero(F);
            for (int j = 0; j < 16; j++) {
                int n = j >> 3;
                int k = (j & 7) >> 1;
                int l0 = (j & 1) * 16;
                long ql = o + n * 64L + (k & 1) * 32L;
                long qh = o + 128 + n * 32L;
                int shift = 4 * (k >> 1);
                FloatVector p = FloatVector.zero(F);
                for (int i = 0; i < 16; i += L) {
                    ByteVector lo = ByteVector.fromMemorySegment(VectorDecode.B, s, ql + l0 + i, LE);
                    ByteVector h = ByteVector.fromMemorySegment(VectorDecode.B, s, qh + l0 + i, LE);
                    ByteVector nib = lo.lanewise(VectorOperators.LSHR, shift).and((byte) 0xF);
                    ByteVector hb = h.lanewise(VectorOperators.LSHR, 2 * k).and((byte) 3).lanewise(VectorOperators.LSHL, 4);
                    p = widen(nib.or(hb).sub((byte) 32)).fma(FloatVector.fromArray(F, qx, xo + b * 256 + j * 16 + i), p);
                }
                a = p.fma(FloatVector.broadcast(F, (float) ScalarDecode.i8(s, o + 192 + j)), a);
            }
            acc = a.fma(FloatVector.broadcast(F, ScalarDecode.half(s, o + 208) * x.d[xo / 256 + b]), acc);
        }
        return Lanes.sum(acc);
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
