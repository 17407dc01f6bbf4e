package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/** Q8_0 ({@code block_q8_0}, 34 bytes per 32 values): {@code fp16 d; i8 qs[32]}; value = qs[j] * d. */
public final class Q8_0 {

    public static final GgmlType TYPE = GgmlType.Q8_0;
    static final int QK = 32;

    private Q8_0() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q8_0", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at);
            for (int j = 0; j < QK; j++) {
                dst[y + j] = Blocks.i8(src, at + 2 + j) * d;
            }
        }
    }
}
