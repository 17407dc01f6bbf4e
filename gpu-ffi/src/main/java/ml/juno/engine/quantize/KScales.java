package ml.juno.engine.quantize;

import jdk.incubator.vector.FloatVector;

/**
 * The 12-byte packing of eight 6-bit scales and eight 6-bit mins shared by Q4_K and Q5_K
 * (ggml {@code get_scale_min_k4} and its inverse in the quantizers).
 */
final class KScales {
    private KScales() {
    }

    /** Packs scale {@code ls} and min {@code lm} (each 0..63) of sub-block {@code j} into {@code q[qo..qo+12)}. */
    static void put(byte[] q, int qo, int j, int ls, int lm) {
        if (j < 4) {
            q[qo + j] = (byte) ls;
            q[qo + j + 4] = (byte) lm;
        } else {
            q[qo + j + 4] = (byte) ((ls & 0xF) | ((lm & 0xF) << 4));
            q[qo + j - 4] |= (byte) ((ls >> 4) << 6);
            q[qo + j] |= (byte) ((lm >> 4) << 6);
        }
    }

    static int scale(byte[] q, int qo, int j) {
        if (j < 4) {
            return q[qo + j] & 63;
        }
        return (q[qo + j + 4] & 0xF) | (((q[qo + j - 4] & 0xFF) >> 6) << 4);
    }

    static int min(byte[] q, int qo, int j) {
        if (j < 4) {
            return q[qo + j + 4] & 63;
        }
        return ((q[qo + j + 4] & 0xFF) >> 4) | (((q[qo + j] & 0xFF) >> 6) << 4);
    }

    /** Scratch for {@link #search}: one quantizer's buffers. */
    static final class Scratch {
        final byte[] levels = new byte[256];
        final byte[] aux = new byte[32];
        final float[] weights = new float[32];
        final float[] scales = new float[8];
        final float[] mins = new float[8];
        final float[] xt = new float[256];
        final float[] wt = new float[256];
        final float[] lt = new float[256];
        final float[] auxT = new float[256];
    }

    /**
     * The scale/min search both Q4_K and Q5_K run per super-block: eight sub-blocks of 32 through
     * {@code make_qkx2_quants}, 6-bit quantized scales and mins, fp16 d/dmin at {@code y[yo]}, {@code y[yo+2]},
     * packed scales at {@code y[yo+4..16)}, then every value re-quantized against the stored scales into
     * {@code s.levels}. With {@code lanes} the eight sub-blocks run side by side ({@link QuantLanes}); without, the
     * scalar reference runs them one by one. Both give the same bytes.
     */
    static void search(float[] x, int xo, byte[] y, int yo, int nmax, float rmin, float rdelta, int nstep,
                       Scratch s, boolean lanes) {
        byte[] L = s.levels;
        float[] scales = s.scales;
        float[] mins = s.mins;
        if (lanes) {
            float[] xt = s.xt;
            for (int j = 0; j < 8; j++) {
                for (int i = 0; i < 32; i++) {
                    xt[i * 8 + j] = x[xo + 32 * j + i];
                }
            }
            FloatVector sumX2 = FloatVector.zero(QuantLanes.F);
            for (int i = 0; i < 32; i++) {
                FloatVector xi = FloatVector.fromArray(QuantLanes.F, xt, i * 8);
                sumX2 = sumX2.add(xi.mul(xi));
            }
            FloatVector avX = sumX2.div(32f).sqrt();
            for (int i = 0; i < 32; i++) {
                avX.add(FloatVector.fromArray(QuantLanes.F, xt, i * 8).abs()).intoArray(s.wt, i * 8);
            }
            QuantLanes.qkx2(32, nmax, xt, s.wt, s.lt, s.auxT, scales, mins, 0, rmin, rdelta, nstep, false);
            for (int j = 0; j < 8; j++) {
                for (int i = 0; i < 32; i++) {
                    L[32 * j + i] = (byte) s.lt[i * 8 + j];
                }
            }
        } else {
            float[] weights = s.weights;
            for (int j = 0; j < 8; ++j) {
                float sumX2 = 0;
                for (int l = 0; l < 32; ++l) {
                    sumX2 += x[xo + 32 * j + l] * x[xo + 32 * j + l];
                }
                float avX = (float) Math.sqrt(sumX2 / 32);
                for (int l = 0; l < 32; ++l) {
                    weights[l] = avX + Math.abs(x[xo + 32 * j + l]);
                }
                scales[j] = QuantMath.makeQkx2Quants(32, nmax, x, xo + 32 * j, weights, L, 32 * j, mins, j, s.aux,
                        rmin, rdelta, nstep, false);
            }
        }
        float maxScale = 0;
        float maxMin = 0;
        for (int j = 0; j < 8; ++j) {
            if (scales[j] > maxScale) {
                maxScale = scales[j];
            }
            if (mins[j] > maxMin) {
                maxMin = mins[j];
            }
        }
        float invScale = maxScale > 0 ? 63.f / maxScale : 0.f;
        float invMin = maxMin > 0 ? 63.f / maxMin : 0.f;
        for (int j = 0; j < 8; ++j) {
            int ls = Math.min(63, QuantMath.nearestInt(invScale * scales[j]) & 0xFF);
            int lm = Math.min(63, QuantMath.nearestInt(invMin * mins[j]) & 0xFF);
            put(y, yo + 4, j, ls, lm);
        }
        QuantMath.putShort(y, yo, QuantMath.toHalf(maxScale / 63.f));
        QuantMath.putShort(y, yo + 2, QuantMath.toHalf(maxMin / 63.f));
        float dAll = QuantMath.fromHalf(Q2_KQuantizer.getShort(y, yo));
        float mAll = QuantMath.fromHalf(Q2_KQuantizer.getShort(y, yo + 2));
        for (int j = 0; j < 8; ++j) {
            float d = dAll * scale(y, yo + 4, j);
            if (d == 0) {
                continue;
            }
            float dm = mAll * min(y, yo + 4, j);
            for (int ii = 0; ii < 32; ++ii) {
                int l = QuantMath.nearestInt((x[xo + 32 * j + ii] + dm) / d);
                L[32 * j + ii] = (byte) Math.max(0, Math.min(nmax, l));
            }
        }
    }
}
