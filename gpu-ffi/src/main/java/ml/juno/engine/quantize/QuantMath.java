package ml.juno.engine.quantize;

/**
 * The scalar helpers ggml's reference quantizers share (ggml-quants.c): rounding, fp16 round trips and the
 * scale searches {@code make_qx_quants}, {@code make_q3_quants}, {@code make_qkx2_quants}. Every float
 * expression keeps the C operand order and stays in float, so results match ggml bit for bit (the C code is
 * compiled without FMA contraction in ggml-base).
 */
final class QuantMath {

    /** ggml's GROUP_MAX_EPS: groups whose largest magnitude is below this quantize to all zeros. */
    static final float GROUP_MAX_EPS = 1e-15f;

    private QuantMath() {
    }

    /** ggml's {@code nearest_int}: round half to even through the 1.5·2^23 magic add (valid for |x| ≤ 2^22). */
    static int nearestInt(float f) {
        float v = f + 12582912f;
        return (Float.floatToRawIntBits(v) & 0x007fffff) - 0x00400000;
    }

    /** C {@code roundf}: round half away from zero. */
    static float roundf(float x) {
        float a = Math.abs(x);
        float r = (float) Math.floor(a);
        if (a - r >= 0.5f) {
            r += 1f;
        }
        return Math.copySign(r, x);
    }

    /** GGML_FP32_TO_FP16 (round to nearest even). */
    static short toHalf(float f) {
        return Float.floatToFloat16(f);
    }

    static float fromHalf(short h) {
        return Float.float16ToFloat(h);
    }

    /** ggml_compute_fp32_to_bf16: quiet NaNs, otherwise round to nearest even on the top 16 bits. */
    static short toBf16(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7fffffff) > 0x7f800000) {
            return (short) ((u >>> 16) | 64);
        }
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }

    static void putShort(byte[] dst, int off, short v) {
        dst[off] = (byte) v;
        dst[off + 1] = (byte) (v >> 8);
    }

    /**
     * {@code make_qx_quants} with no importance weights: a symmetric scale for {@code n} values with levels
     * {@code -nmax..nmax-1}, stored biased by {@code nmax} in {@code L}. {@code rmseType} 0 returns the plain
     * max scale; 1 weights errors by x² and searches 18 nearby scales.
     */
    static float makeQxQuants(int n, int nmax, float[] x, int xo, byte[] L, int lo, int rmseType) {
        float max = 0;
        float amax = 0;
        for (int i = 0; i < n; ++i) {
            float ax = Math.abs(x[xo + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xo + i];
            }
        }
        if (amax < GROUP_MAX_EPS) {
            for (int i = 0; i < n; ++i) {
                L[lo + i] = 0;
            }
            return 0f;
        }
        float iscale = (float) -nmax / max;
        if (rmseType == 0) {
            for (int i = 0; i < n; ++i) {
                int l = nearestInt(iscale * x[xo + i]);
                L[lo + i] = (byte) (nmax + Math.max(-nmax, Math.min(nmax - 1, l)));
            }
            return 1 / iscale;
        }
        boolean returnEarly = false;
        if (rmseType < 0) {
            rmseType = -rmseType;
            returnEarly = true;
        }
        float sumlx = 0;
        float suml2 = 0;
        for (int i = 0; i < n; ++i) {
            float xi = x[xo + i];
            int l = nearestInt(iscale * xi);
            l = Math.max(-nmax, Math.min(nmax - 1, l));
            L[lo + i] = (byte) (l + nmax);
            float w = weight(rmseType, xi);
            sumlx += w * xi * l;
            suml2 += w * l * l;
        }
        float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
        if (returnEarly) {
            return suml2 > 0 ? 0.5f * (scale + 1 / iscale) : 1 / iscale;
        }
        float best = scale * sumlx;
        for (int is = -9; is <= 9; ++is) {
            if (is == 0) {
                continue;
            }
            iscale = -(nmax + 0.1f * is) / max;
            sumlx = 0;
            suml2 = 0;
            for (int i = 0; i < n; ++i) {
                float xi = x[xo + i];
                int l = nearestInt(iscale * xi);
                l = Math.max(-nmax, Math.min(nmax - 1, l));
                float w = weight(rmseType, xi);
                sumlx += w * xi * l;
                suml2 += w * l * l;
            }
            if (suml2 > 0 && sumlx * sumlx > best * suml2) {
                for (int i = 0; i < n; ++i) {
                    int l = nearestInt(iscale * x[xo + i]);
                    L[lo + i] = (byte) (nmax + Math.max(-nmax, Math.min(nmax - 1, l)));
                }
                scale = sumlx / suml2;
                best = scale * sumlx;
            }
        }
        return scale;
    }

    private static float weight(int rmseType, float x) {
        return switch (rmseType) {
            case 1 -> x * x;
            case 2 -> 1;
            case 3 -> Math.abs(x);
            default -> (float) Math.sqrt(Math.abs(x));
        };
    }

    /**
     * {@code make_q3_quants}: symmetric levels {@code -nmax..nmax-1} (biased by nmax in {@code L}); with
     * {@code doRmse} it refines levels one at a time for up to five passes, weighting by x².
     */
    static float makeQ3Quants(int n, int nmax, float[] x, int xo, byte[] L, int lo, boolean doRmse) {
        float max = 0;
        float amax = 0;
        for (int i = 0; i < n; ++i) {
            float ax = Math.abs(x[xo + i]);
            if (ax > amax) {
                amax = ax;
                max = x[xo + i];
            }
        }
        if (amax < GROUP_MAX_EPS) {
            for (int i = 0; i < n; ++i) {
                L[lo + i] = 0;
            }
            return 0f;
        }
        float iscale = (float) -nmax / max;
        if (doRmse) {
            float sumlx = 0;
            float suml2 = 0;
            for (int i = 0; i < n; ++i) {
                float xi = x[xo + i];
                int l = nearestInt(iscale * xi);
                l = Math.max(-nmax, Math.min(nmax - 1, l));
                L[lo + i] = (byte) l;
                float w = xi * xi;
                sumlx += w * xi * l;
                suml2 += w * l * l;
            }
            for (int itry = 0; itry < 5; ++itry) {
                int nChanged = 0;
                for (int i = 0; i < n; ++i) {
                    float xi = x[xo + i];
                    int li = L[lo + i];
                    float w = xi * xi;
                    float slx = sumlx - w * xi * li;
                    if (slx > 0) {
                        float sl2 = suml2 - w * li * li;
                        int newL = nearestInt(xi * sl2 / slx);
                        newL = Math.max(-nmax, Math.min(nmax - 1, newL));
                        if (newL != li) {
                            slx += w * xi * newL;
                            sl2 += w * newL * newL;
                            if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
                                L[lo + i] = (byte) newL;
                                sumlx = slx;
                                suml2 = sl2;
                                ++nChanged;
                            }
                        }
                    }
                }
                if (nChanged == 0) {
                    break;
                }
            }
            for (int i = 0; i < n; ++i) {
                L[lo + i] += (byte) nmax;
            }
            return suml2 > 0.0f ? sumlx / suml2 : 0.0f;
        }
        for (int i = 0; i < n; ++i) {
            int l = nearestInt(iscale * x[xo + i]);
            l = Math.max(-nmax, Math.min(nmax - 1, l));
            L[lo + i] = (byte) (l + nmax);
        }
        return 1 / iscale;
    }

    /**
     * {@code make_qkx2_quants}: an asymmetric scale and min for levels {@code 0..nmax}, searched over
     * {@code nstep+1} candidate scales by weighted least squares. Returns the scale; the (positive) min lands
     * in {@code theMin[minIdx]}. {@code L} and {@code Laux} hold unsigned levels (0..nmax).
     */
    static float makeQkx2Quants(int n, int nmax, float[] x, int xo, float[] weights, byte[] L, int lo,
                                float[] theMin, int minIdx, byte[] Laux, float rmin, float rdelta, int nstep,
                                boolean useMad) {
        float min = x[xo];
        float max = x[xo];
        float sumW = weights[0];
        float sumX = sumW * x[xo];
        for (int i = 1; i < n; ++i) {
            float xi = x[xo + i];
            if (xi < min) {
                min = xi;
            }
            if (xi > max) {
                max = xi;
            }
            float w = weights[i];
            sumW += w;
            sumX += w * xi;
        }
        if (min > 0) {
            min = 0;
        }
        if (max == min) {
            for (int i = 0; i < n; ++i) {
                L[lo + i] = 0;
            }
            theMin[minIdx] = -min;
            return 0f;
        }
        float iscale = nmax / (max - min);
        float scale = 1 / iscale;
        float bestError = 0;
        for (int i = 0; i < n; ++i) {
            float xi = x[xo + i];
            int l = nearestInt(iscale * (xi - min));
            l = Math.max(0, Math.min(nmax, l));
            L[lo + i] = (byte) l;
            float diff = scale * l + min - xi;
            diff = useMad ? Math.abs(diff) : diff * diff;
            bestError += weights[i] * diff;
        }
        if (nstep < 1) {
            theMin[minIdx] = -min;
            return scale;
        }
        for (int is = 0; is <= nstep; ++is) {
            iscale = (rmin + rdelta * is + nmax) / (max - min);
            float sumL = 0;
            float sumL2 = 0;
            float sumXl = 0;
            for (int i = 0; i < n; ++i) {
                float xi = x[xo + i];
                int l = nearestInt(iscale * (xi - min));
                l = Math.max(0, Math.min(nmax, l));
                Laux[i] = (byte) l;
                float w = weights[i];
                sumL += w * l;
                sumL2 += w * l * l;
                sumXl += w * l * xi;
            }
            float d = sumW * sumL2 - sumL * sumL;
            if (d > 0) {
                float thisScale = (sumW * sumXl - sumX * sumL) / d;
                float thisMin = (sumL2 * sumX - sumL * sumXl) / d;
                if (thisMin > 0) {
                    thisMin = 0;
                    thisScale = sumXl / sumL2;
                }
                float curError = 0;
                for (int i = 0; i < n; ++i) {
                    float diff = thisScale * (Laux[i] & 0xFF) + thisMin - x[xo + i];
                    diff = useMad ? Math.abs(diff) : diff * diff;
                    curError += weights[i] * diff;
                }
                if (curError < bestError) {
                    System.arraycopy(Laux, 0, L, lo, n);
                    bestError = curError;
                    scale = thisScale;
                    min = thisMin;
                }
            }
        }
        theMin[minIdx] = -min;
        return scale;
    }
}
