package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q2_K ({@code block_q2_K}, 84 bytes per 256 values): {@code u8 scales[16]; u8 qs[64]; fp16 d; fp16 dmin}. Sixteen
 * sub-blocks of 16; scales[i] holds a 4-bit scale (low) and 4-bit min (high); value = d*sc * q - dmin*m, q 2 bits.
 * Each 128-value half reads 32 qs bytes four times, shifting by 0, 2, 4, 6.
 */
public final class Q2_K {

    public static final GgmlType TYPE = GgmlType.Q2_K;
    static final int QK = 256;

    private Q2_K() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q2_K", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at + 80);
            float min = Blocks.f16(src, at + 82);
            int is = 0;
            for (int n = 0; n < QK; n += 128) {
                long q = at + 16 + n / 4; // 32 bytes of qs per 128 values
                for (int shift = 0; shift < 8; shift += 2) {
                    for (int half = 0; half < 2; half++) {
                        int sc = Blocks.u8(src, at + is++);
                        float dl = d * (sc & 0xF);
                        float ml = min * (sc >>> 4);
                        for (int l = 0; l < 16; l++) {
                            dst[y++] = dl * ((Blocks.u8(src, q + half * 16 + l) >>> shift) & 3) - ml;
                        }
                    }
                }
            }
        }
    }
}
