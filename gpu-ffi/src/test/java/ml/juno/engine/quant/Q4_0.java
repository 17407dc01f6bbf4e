package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q4_0 (ggml-common.h {@code block_q4_0}, 18 bytes per 32 values): {@code fp16 d; u8 qs[16]}. Element j is the
 * low nibble of qs[j], element j+16 the high nibble; value = (nibble - 8) * d.
 */
public final class Q4_0 {

    public static final GgmlType TYPE = GgmlType.Q4_0;
    static final int QK = 32;

    private Q4_0() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q4_0", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at);
            for (int j = 0; j < QK / 2; j++) {
                int q = Blocks.u8(src, at + 2 + j);
                dst[y + j] = ((q & 0xF) - 8) * d;
                dst[y + j + QK / 2] = ((q >>> 4) - 8) * d;
            }
        }
    }
}
