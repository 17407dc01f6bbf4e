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
            TABLE[h] = Float.float16ToFloat(Float.floatToFloat16(ScalarKernels.gelu(x)));
        }
    }

    private GeluTable() {}

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
