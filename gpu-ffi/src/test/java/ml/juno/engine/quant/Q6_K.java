package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * Q6_K ({@code block_q6_K}, 210 bytes per 256 values): {@code u8 ql[128]; u8 qh[64]; i8 scales[16]; fp16 d}.
 * 6-bit values (4 low bits in ql, 2 high bits in qh) minus 32, sixteen signed 8-bit scales of 16 values each;
 * value = (d * scale) * q. Each 128-value half uses 64 ql bytes, 32 qh bytes and 8 scales.
 */
public final class Q6_K {

    public static final GgmlType TYPE = GgmlType.Q6_K;
    static final int QK = 256;

    private Q6_K() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("Q6_K", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at + 208);
            long ql = at;
            long qh = at + 128;
            long sc = at + 192;
            for (int n = 0; n < QK; n += 128) {
                for (int l = 0; l < 32; l++) {
                    int is = l / 16;
                    int h = Blocks.u8(src, qh + l);
                    int a = Blocks.u8(src, ql + l);
                    int c = Blocks.u8(src, ql + l + 32);
                    int q1 = ((a & 0xF) | ((h & 3) << 4)) - 32;
                    int q2 = ((c & 0xF) | (((h >>> 2) & 3) << 4)) - 32;
                    int q3 = ((a >>> 4) | (((h >>> 4) & 3) << 4)) - 32;
                    int q4 = ((c >>> 4) | (((h >>> 6) & 3) << 4)) - 32;
                    dst[y + l] = d * Blocks.i8(src, sc + is) * q1;
                    dst[y + l + 32] = d * Blocks.i8(src, sc + is + 2) * q2;
                    dst[y + l + 64] = d * Blocks.i8(src, sc + is + 4) * q3;
                    dst[y + l + 96] = d * Blocks.i8(src, sc + is + 6) * q4;
                }
                y += 128;
                ql += 64;
                qh += 32;
                sc += 8;
            }
        }
    }
}
