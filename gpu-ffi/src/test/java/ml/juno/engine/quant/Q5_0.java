package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q5_0 ({@code block_q5_0}, 22 bytes per 32 values): {@code fp16 d; u8 qh[4]; u8 qs[16]}. The fifth bit of element
 * i is bit i of the little-endian u32 qh; value = (5-bit q - 16) * d.
 */
public final class Q5_0 {

    public static final GgmlType TYPE = GgmlType.Q5_0;
    static final int QK = 32;

    private Q5_0() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q5_0", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at);
            int qh = src.get(Blocks.LE_INT, at + 2);
            for (int j = 0; j < QK / 2; j++) {
                int q = Blocks.u8(src, at + 6 + j);
                int h0 = ((qh >>> j) << 4) & 0x10;
                int h1 = (qh >>> (j + 12)) & 0x10;
                dst[y + j] = (((q & 0xF) | h0) - 16) * d;
                dst[y + j + QK / 2] = (((q >>> 4) | h1) - 16) * d;
            }
        }
    }
}
