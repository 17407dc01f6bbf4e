package ml.juno.engine.kernel.cpu;

/**
 * Rounds activations the way llama.cpp's CPU backend does before a dot product with weights of a given type, to the
 * type's {@link CpuTypeTraits#activation activation format}: F16 weights see F16 activations, BF16 see BF16,
 * Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 see Q8_0/Q8_1 blocks of 32, the K-quants see Q8_K blocks of 256. The rounded values are
 * written back as floats (quantized value × block scale), so the dot product itself can run in float; the integer sums
 * llama.cpp forms are reproduced up to float rounding. Scalar and allocation-free.
 */
final class ActivationRounding {

    private ActivationRounding() {}

    /** Rounds {@code n} values of {@code x} from {@code off} into {@code y} at the same offsets. */
    static void round(ActivationFormat format, float[] x, float[] y, int off, int n) {
        switch (format) {
            case F32 -> System.arraycopy(x, off, y, off, n);
            case F16 -> {
                for (int i = off; i < off + n; i++) {
                    y[i] = Float.float16ToFloat(Float.floatToFloat16(x[i]));
                }
            }
            case BF16 -> {
                for (int i = off; i < off + n; i++) {
                    y[i] = BlockKernel.bf16(toBf16(x[i]));
                }
            }
            case Q8_0, Q8_1 -> {
                for (int b = off; b < off + n; b += 32) {
                    q8_0(x, y, b);
                }
            }
            case Q8_K -> {
                for (int b = off; b < off + n; b += 256) {
                    q8_k(x, y, b);
                }
            }
        }
    }

    /** ggml's FP32→BF16: round to nearest even, quiet NaNs kept. */
    static short toBf16(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7fffffff) > 0x7f800000) {
            return (short) ((u >>> 16) | 64);
        }
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }

    // quantize_row_q8_0 (x86 path): scale = amax/127 stored as f16, q = round-half-even(x·127/amax)
    private static void q8_0(float[] x, float[] y, int b) {
        float amax = 0f;
        for (int j = 0; j < 32; j++) {
            amax = Math.max(amax, Math.abs(x[b + j]));
        }
        float d = Float.float16ToFloat(Float.floatToFloat16(amax / 127f));
        float id = amax != 0f ? 127f / amax : 0f;
        for (int j = 0; j < 32; j++) {
            y[b + j] = d * (float) Math.rint(x[b + j] * id);
        }
    }

    // quantize_row_q8_K_ref: signed max by magnitude, iscale = -127/max, q = min(127, nearest(iscale·x)), d = 1/iscale
    private static void q8_k(float[] x, float[] y, int b) {
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
            for (int j = 0; j < 256; j++) {
                y[b + j] = 0f;
            }
            return;
        }
        float iscale = -127f / max;
        float d = 1f / iscale;
        for (int j = 0; j < 256; j++) {
            int q = Math.min(127, (int) Math.rint(iscale * x[b + j]));
            y[b + j] = d * q;
        }
    }
}
