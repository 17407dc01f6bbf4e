package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q8_K ({@code block_q8_K}, 292 bytes per 256 values): {@code f32 d; i8 qs[256]; i16 bsums[16]}; value = d * qs[j].
 * The block sums are an aid for dot products and do not take part in dequantization.
 */
public final class Q8_K {

    public static final GgmlType TYPE = GgmlType.Q8_K;
    static final int QK = 256;

    private Q8_K() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q8_K", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = src.get(Blocks.LE_FLOAT, at);
            for (int j = 0; j < QK; j++) {
                dst[y + j] = d * Blocks.i8(src, at + 4 + j);
            }
        }
    }
}
