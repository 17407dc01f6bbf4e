package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q4_1 ({@code block_q4_1}, 20 bytes per 32 values): {@code fp16 d; fp16 m; u8 qs[16]}; value = nibble * d + m
 * (low nibbles first, then high nibbles).
 */
public final class Q4_1 {

    public static final GgmlType TYPE = GgmlType.Q4_1;
    static final int QK = 32;

    private Q4_1() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q4_1", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at);
            float m = Blocks.f16(src, at + 2);
            for (int j = 0; j < QK / 2; j++) {
                int q = Blocks.u8(src, at + 4 + j);
                dst[y + j] = (q & 0xF) * d + m;
                dst[y + j + QK / 2] = (q >>> 4) * d + m;
            }
        }
    }
}
