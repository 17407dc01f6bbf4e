package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q5_K ({@code block_q5_K}, 176 bytes per 256 values): {@code fp16 d; fp16 dmin; u8 scales[12]; u8 qh[32];
 * u8 qs[128]}. As {@link Q4_K} with a fifth bit per value from qh: sub-block pair k uses bits 2k and 2k+1 of qh[l].
 */
public final class Q5_K {

    public static final GgmlType TYPE = GgmlType.Q5_K;
    static final int QK = 256;

    private Q5_K() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q5_K", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at);
            float min = Blocks.f16(src, at + 2);
            long scales = at + 4;
            long qh = at + 16;
            long ql = at + 48;
            int u1 = 1;
            int u2 = 2;
            for (int is = 0; is < 8; is += 2) {
                int sm1 = Q4_K.scaleMin(src, scales, is);
                int sm2 = Q4_K.scaleMin(src, scales, is + 1);
                float d1 = d * (sm1 & 0xFF);
                float m1 = min * (sm1 >>> 8);
                float d2 = d * (sm2 & 0xFF);
                float m2 = min * (sm2 >>> 8);
                for (int l = 0; l < 32; l++) {
                    int h = (Blocks.u8(src, qh + l) & u1) != 0 ? 16 : 0;
                    dst[y++] = d1 * ((Blocks.u8(src, ql + l) & 0xF) + h) - m1;
                }
                for (int l = 0; l < 32; l++) {
                    int h = (Blocks.u8(src, qh + l) & u2) != 0 ? 16 : 0;
                    dst[y++] = d2 * ((Blocks.u8(src, ql + l) >>> 4) + h) - m2;
                }
                ql += 32;
                u1 <<= 2;
                u2 <<= 2;
            }
        }
    }
}
