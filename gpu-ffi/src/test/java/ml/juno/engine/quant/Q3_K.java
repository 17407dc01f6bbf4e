package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q3_K ({@code block_q3_K}, 110 bytes per 256 values): {@code u8 hmask[32]; u8 qs[64]; u8 scales[12]; fp16 d}.
 * Sixteen 6-bit signed scales (stored +32) packed in 12 bytes; each value has 2 low bits in qs and a high bit in
 * hmask, where a clear high bit means subtract 4: value = d*(scale-32) * (q2 - (hbit ? 0 : 4)).
 */
public final class Q3_K {

    public static final GgmlType TYPE = GgmlType.Q3_K;
    static final int QK = 256;

    private Q3_K() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q3_K", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float dAll = Blocks.f16(src, at + 108);
            long hm = at;
            long sc = at + 96;
            int is = 0;
            int m = 1;
            for (int n = 0; n < QK; n += 128) {
                long q = at + 32 + n / 4;
                for (int shift = 0; shift < 8; shift += 2) {
                    for (int half = 0; half < 2; half++) {
                        float dl = dAll * (scale(src, sc, is++) - 32);
                        for (int l = 0; l < 16; l++) {
                            int k = half * 16 + l;
                            int q2 = (Blocks.u8(src, q + k) >>> shift) & 3;
                            int sub = (Blocks.u8(src, hm + k) & m) != 0 ? 0 : 4;
                            dst[y++] = dl * (q2 - sub);
                        }
                    }
                    m <<= 1;
                }
            }
        }
    }

    /**
     * Scale i (0..15), 6 bits: the low 4 bits are nibble (i / 8) of byte (i % 8), the high 2 bits are bits
     * 2*(i / 4) of byte 8 + (i % 4).
     */
    static int scale(MemorySegment src, long sc, int i) {
        int low = (Blocks.u8(src, sc + (i & 7)) >>> (4 * (i >>> 3))) & 0xF;
        int high = (Blocks.u8(src, sc + 8 + (i & 3)) >>> (2 * (i >>> 2))) & 3;
        return low | (high << 4);
    }
}
