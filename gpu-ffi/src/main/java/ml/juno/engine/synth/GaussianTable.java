package ml.juno.engine.synth;

/**
 * Standard normal samples by table lookup: 65536 quantiles Φ⁻¹((k+½)/65536), picked by 16 random bits. Four
 * samples per 64-bit random word makes generating a billion weights cheap; the distribution is N(0,1) to within
 * its 16-bit quantile grid (tails cut at about ±4.3σ), which is all a benchmark model needs.
 */
final class GaussianTable {
    static final float[] QUANTILES = new float[1 << 16];

    static {
        for (int k = 0; k < QUANTILES.length; k++) {
            QUANTILES[k] = (float) inverseNormalCdf((k + 0.5) / QUANTILES.length);
        }
    }

    private GaussianTable() {
    }

    /** SplitMix64's output function: a well-mixed 64-bit value of a counter. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /**
     * Fills {@code dst[off .. off+n)} with {@code mean + std·N(0,1)} from the stream that {@code state} starts.
     */
    static void fill(long state, float[] dst, int off, int n, float mean, float std) {
        long s = state;
        int i = 0;
        while (i < n) {
            s += 0x9e3779b97f4a7c15L;
            long r = mix(s);
            for (int k = 0; k < 4 && i < n; k++, i++) {
                dst[off + i] = mean + std * QUANTILES[(int) (r >>> (16 * k)) & 0xFFFF];
            }
        }
    }

    /** Acklam's rational approximation of the normal quantile (relative error below 1.2e-9). */
    static double inverseNormalCdf(double p) {
        final double[] a = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
            1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
        final double[] b = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
            6.680131188771972e+01, -1.328068155288572e+01};
        final double[] c = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
            -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
        final double[] d = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
            3.754408661907416e+00};
        final double low = 0.02425;
        if (p < low) {
            double q = Math.sqrt(-2 * Math.log(p));
            return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                    / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        }
        if (p > 1 - low) {
            double q = Math.sqrt(-2 * Math.log(1 - p));
            return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                    / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
        }
        double q = p - 0.5;
        double r = q * q;
        return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
    }
}
