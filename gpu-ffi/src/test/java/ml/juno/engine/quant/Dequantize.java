package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.tensor.GgmlType;

/** Dispatches dequantization to the reference class of each block format. */
public final class Dequantize {

    private Dequantize() {}

    /** Whether {@link #row} handles {@code type}. */
    public static boolean supports(GgmlType type) {
        return switch (type) {
            case F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K, IQ4_NL -> true;
            default -> false;
        };
    }

    /**
     * Dequantizes {@code count} values (a whole number of blocks) starting at {@code byteOffset} in {@code src} into
     * {@code dst[dstOffset ..]}, bit-exact with ggml's reference dequantizers.
     *
     * @throws UnsupportedOperationException for a type with no dequantizer here
     */
    public static void row(GgmlType type, MemorySegment src, long byteOffset, float[] dst, int dstOffset, int count) {
        switch (type) {
            case F32 -> F32.dequantize(src, byteOffset, dst, dstOffset, count);
            case F16 -> F16.dequantize(src, byteOffset, dst, dstOffset, count);
            case BF16 -> BF16.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q4_0 -> Q4_0.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q4_1 -> Q4_1.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q5_0 -> Q5_0.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q5_1 -> Q5_1.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q8_0 -> Q8_0.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q2_K -> Q2_K.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q3_K -> Q3_K.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q4_K -> Q4_K.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q5_K -> Q5_K.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q6_K -> Q6_K.dequantize(src, byteOffset, dst, dstOffset, count);
            case Q8_K -> Q8_K.dequantize(src, byteOffset, dst, dstOffset, count);
            case IQ4_NL -> IQ4_NL.dequantize(src, byteOffset, dst, dstOffset, count);
            default -> throw new UnsupportedOperationException("no dequantizer for " + type);
        }
    }

    /** The whole tensor as floats, in ggml order (row-major, rows of {@code shape[0]}). For tests and tools. */
    public static float[] tensor(GgufFile file, GgufTensorInfo t) {
        long n = t.elementCount();
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(t.name() + ": " + n + " elements do not fit a float[]");
        }
        float[] out = new float[(int) n];
        row(t.type(), file.data(t), 0, out, 0, (int) n);
        return out;
    }
}
