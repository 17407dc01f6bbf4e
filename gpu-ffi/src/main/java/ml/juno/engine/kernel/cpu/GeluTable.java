package ml.juno.engine.kernel.cpu;

/**
 * ggml's GELU table ({@code ggml_table_gelu_f16}): the tanh-approximation GELU of every F16 value, rounded to F16.
 * ggml's CPU backend evaluates GELU by rounding the input to F16 and looking it up here (below -10: 0, above 10: the
 * input), so matching llama.cpp's numerics means using the same table. 64 Ki floats, built once.
 */
final class GeluTable {
    private static final float[] TABLE = new float[1 << 16];

    static {
        for (int h = 0; h < TABLE.length; h++) {
            float x = Float.float16ToFloat((short) h);
            TABLE[h] = Float.float16ToFloat(Float.floatToFloat16(tanhGelu(x)));
        }
    }

    private static final float GELU_COEF_A = 0.044715f;
    private static final float SQRT_2_OVER_PI = 0.79788456080286535587989211986876f;

    private GeluTable() {}

    /** ggml's {@code ggml_gelu_f32}: the tanh approximation in float. */
    static float tanhGelu(float x) {
        return 0.5f * x * (1.0f + (float) Math.tanh(SQRT_2_OVER_PI * x * (1.0f + GELU_COEF_A * x * x)));
    }

    static float gelu(float x) {
        if (x <= -10f) {
            return 0f;
        }
        if (x >= 10f) {
            return x;
        }
        return TABLE[Float.floatToFloat16(x) & 0xffff];
    }
}
