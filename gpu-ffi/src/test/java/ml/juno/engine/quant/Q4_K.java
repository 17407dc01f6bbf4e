package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q4_K ({@code block_q4_K}, 144 bytes per 256 values): {@code fp16 d; fp16 dmin; u8 scales[12]; u8 qs[128]}.
 * Eight sub-blocks of 32 with 6-bit scale and min ({@link #scaleMin}); value = d*sc * q - dmin*m, q 4 bits. Each
 * 64-value chunk reads 32 qs bytes: low nibbles for the first 32 values, high nibbles for the next 32.
 */
public final class Q4_K {

    public static final GgmlType TYPE = GgmlType.Q4_K;
    static final int QK = 256;

    private Q4_K() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q4_K", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at);
            float min = Blocks.f16(src, at + 2);
            long scales = at + 4;
            long q = at + 16;
            for (int is = 0; is < 8; is += 2) {
                int sm1 = scaleMin(src, scales, is);
                int sm2 = scaleMin(src, scales, is + 1);
                float d1 = d * (sm1 & 0xFF);
                float m1 = min * (sm1 >>> 8);
                float d2 = d * (sm2 & 0xFF);
                float m2 = min * (sm2 >>> 8);
                for (int l = 0; l < 32; l++) {
                    dst[y++] = d1 * (Blocks.u8(src, q + l) & 0xF) - m1;
                }
                for (int l = 0; l < 32; l++) {
                    dst[y++] = d2 * (Blocks.u8(src, q + l) >>> 4) - m2;
                }
                q += 32;
            }
        }
    }

    /**
     * ggml's get_scale_min_k4: the 6-bit scale (low byte of the result) and min (second byte) of sub-block j of the
     * 12-byte K-quant scale field at {@code sc}. Shared with {@link Q5_K}.
     */
    static int scaleMin(MemorySegment src, long sc, int j) {
        int s;
        int m;
        if (j < 4) {
            s = Blocks.u8(src, sc + j) & 63;
            m = Blocks.u8(src, sc + j + 4) & 63;
        } else {
            s = (Blocks.u8(src, sc + j + 4) & 0xF) | ((Blocks.u8(src, sc + j - 4) >>> 6) << 4);
            m = (Blocks.u8(src, sc + j + 4) >>> 4) | ((Blocks.u8(src, sc + j) >>> 6) << 4);
        }
        return s | (m << 8);
    }
}
