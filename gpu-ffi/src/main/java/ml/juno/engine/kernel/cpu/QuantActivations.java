package ml.juno.engine.kernel.cpu;

/**
 * Activation rows quantized the way llama.cpp quantizes them for integer dot products: Q8_0/Q8_1 blocks of 32 (scale
 * rounded to F16) or Q8_K blocks of 256 (F32 scale, with sums of every 16). Quants are 16-bit lanes in [-127, 127], ready
 * for the 16-bit multiplies of {@link QuantLanes}. Buffers grow on first use and are then reused.
 */
final class QuantActivations {
    /** {@code [batch][cols]} quants. */
    short[] q = new short[0];
    /** Scale per block ({@code [batch][cols/32]} or {@code [batch][cols/256]}). */
    float[] d = new float[0];
    /** Q8_K: sum of the quants of every 16 ({@code [batch][cols/16]}); Q8_1: F16-rounded {@code d·Σq} per 32. */
    float[] sums = new float[0];
    /** Q8_K: 32 × the sum of the quants of every 16 ({@code [batch][cols/16]}), for the Q6_K offset term. */
    int[] bsums32 = new int[0];
    /** Q8_K: sum of the quants of every 32 ({@code [batch][cols/32]}), for the Q4_K/Q5_K min terms. */
    int[] sums32 = new int[0];
    /**
     * Q8_K, by activation row last (after {@link #toFloatLanes}): {@code sumsByRow[(8b + j)·batch + r]} = sum of sub-block
     * j of super-block b of row r, as a float, and {@code dByRow[b·batch + r]} = that super-block's scale; so one vector
     * holds eight rows' values, for the K-quant min terms of many rows at once ({@link SuperBlockKernel#kCorrections}).
     */
    float[] sumsByRow = new float[0];
    float[] dByRow = new float[0];
    /**
     * Q8_K in the quad order (after {@code toFloatLanes(batch, true)}): per row and super-block, the eight lanes'
     * {@code 32·bsum} of their offset pair's first ({@code bsA}) and second ({@code bsB}) sub-block, as
     * {@link QuantRow#scA}/{@code scB} pair the scales.
     */
    float[] bsA = new float[0];
    float[] bsB = new float[0];
    /** The quants as floats in {@link QuantLanes#lanes lane order} ({@code [batch][cols]}), after {@link #toFloatLanes}. */
    float[] qf = new float[0];
    int cols;
    int blockSize;

    /** Quantizes {@code batch} rows of {@code x} ({@code [batch][cols]}) to {@code format} (Q8_0, Q8_1 or Q8_K). */
    void quantize(float[] x, int batch, int cols, ActivationFormat format) {
        boolean k = format == ActivationFormat.Q8_K;
        this.cols = cols;
        this.blockSize = k ? 256 : 32;
        int n = batch * cols;
        if (q.length < n) {
            q = new short[n];
            d = new float[n / 32];
            sums = new float[n / 16];
            sums32 = new int[n / 32];
            bsums32 = new int[n / 16];
        }
        if (k) {
            for (int b = 0; b < n; b += 256) {
                q8k(x, b);
            }
        } else {
            for (int b = 0; b < n; b += 32) {
                q8(x, b);
            }
        }
    }

    /**
     * Fills {@link #qf} for the first {@code batch} rows (the batched float kernels read it): in {@link QuantLanes#lanes}
     * order, or for Q6_K weights ({@code quads}) in {@link Q6_KKernel#lanesQuad} order with the offset sums.
     */
    void toFloatLanes(int batch, boolean quads) {
        int n = batch * cols;
        if (qf.length < n) {
            qf = new float[q.length];
            sumsByRow = new float[q.length / 32];
            dByRow = new float[q.length / 256];
            bsA = new float[q.length / 32];
            bsB = new float[q.length / 32];
        }
        if (quads) {
            for (int e = 0; e < n; e += 32) {
                Q6_KKernel.lanesQuad(q, e, qf, e, 1f, 1f, 0f);
            }
            for (int g = 0; g < n / 256; g++) { // g = row·(cols/256) + super-block, as Q6_KKernel.q6Offset indexes
                Q6_KKernel.offsetPairs(bsums32, g * 16, bsA, bsB, g * 8);
            }
            return;
        }
        if (blockSize == 256) {
            int nb = cols / 256;
            for (int r = 0; r < batch; r++) {
                for (int b = 0; b < nb; b++) {
                    dByRow[b * batch + r] = d[r * nb + b];
                    for (int j = 0; j < 8; j++) {
                        sumsByRow[(8 * b + j) * batch + r] = sums32[(r * nb + b) * 8 + j];
                    }
                }
            }
        }
        for (int e = 0; e < n; e += 32) {
            QuantLanes.lanes(q, e, qf, e, 1f, 1f);
        }
    }

    // quantize_row_q8_0 / q8_1 (x86 path): scale = amax/127 stored as f16, q = round-half-even(x·127/amax); s = f16(d·Σq)
    private void q8(float[] x, int b) {
        float amax = 0f;
        for (int j = 0; j < 32; j++) {
            amax = Math.max(amax, Math.abs(x[b + j]));
        }
        float d0 = Float.float16ToFloat(Float.floatToFloat16(amax / 127f));
        float id = amax != 0f ? 127f / amax : 0f;
        int sum = 0;
        for (int j = 0; j < 32; j++) {
            int v = (int) Math.rint(x[b + j] * id);
            q[b + j] = (short) v;
            sum += v;
        }
        d[b / 32] = d0;
        sums[b / 32] = Float.float16ToFloat(Float.floatToFloat16(sum * d0));
    }

    // quantize_row_q8_K_ref: signed max by magnitude, iscale = -127/max, q = min(127, nearest(iscale·x)), d = 1/iscale
    private void q8k(float[] x, int b) {
        float amax = 0f;
        float max = 0f;
        for (int j = 0; j < 256; j++) {
            float ax = Math.abs(x[b + j]);
            if (ax > amax) {
                amax = ax;
                max = x[b + j];
            }
        }
        if (amax == 0f) {
            java.util.Arrays.fill(q, b, b + 256, (short) 0);
            java.util.Arrays.fill(sums, b / 16, b / 16 + 16, 0f);
            java.util.Arrays.fill(sums32, b / 32, b / 32 + 8, 0);
            java.util.Arrays.fill(bsums32, b / 16, b / 16 + 16, 0);
            d[b / 256] = 0f;
            return;
        }
        float iscale = -127f / max;
        for (int g = 0; g < 16; g++) {
            int sum = 0;
            for (int j = 0; j < 16; j++) {
                int v = Math.min(127, (int) Math.rint(iscale * x[b + g * 16 + j]));
                q[b + g * 16 + j] = (short) v;
                sum += v;
            }
            sums[b / 16 + g] = sum;
            bsums32[b / 16 + g] = 32 * sum;
            if ((g & 1) == 1) {
                sums32[b / 32 + g / 2] = (int) (sums[b / 16 + g - 1] + sum);
            }
        }
        d[b / 256] = 1f / iscale;
    }
}
