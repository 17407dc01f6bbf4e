package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q5_1 ({@code block_q5_1}, 24 bytes per 32 values): {@code fp16 d; fp16 m; u8 qh[4]; u8 qs[16]}; value =
 * 5-bit q * d + m, the fifth bits as in {@link Q5_0}.
 */
public final class Q5_1 {

    public static final GgmlType TYPE = GgmlType.Q5_1;
    static final int QK = 32;

    private Q5_1() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q5_1", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at);
            float m = Blocks.f16(src, at + 2);
            int qh = src.get(Blocks.LE_INT, at + 4);
            for (int j = 0; j < QK / 2; j++) {
                int q = Blocks.u8(src, at + 8 + j);
                int h0 = ((qh >>> j) << 4) & 0x10;
                int h1 = (qh >>> (j + 12)) & 0x10;
                dst[y + j] = ((q & 0xF) | h0) * d + m;
                dst[y + j + QK / 2] = ((q >>> 4) | h1) * d + m;
            }
        }
    }
}
