package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * IQ4_NL ({@code block_iq4_nl}, 18 bytes per 32 values): {@code fp16 d; u8 qs[16]}; each nibble indexes the
 * non-linear table {@code kvalues_iq4nl}; value = table[nibble] * d (low nibbles first, then high).
 */
public final class IQ4_NL {

    public static final GgmlType TYPE = GgmlType.IQ4_NL;
    static final int QK = 32;
    /** ggml-common.h kvalues_iq4nl. */
    static final byte[] KVALUES = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

    private IQ4_NL() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("IQ4_NL", QK, dst, dstOffset, count);
        for (int b = 0; b < count / QK; b++) {
            long at = offset + (long) b * TYPE.typeSize;
            int y = dstOffset + b * QK;
            float d = Blocks.f16(src, at);
            for (int j = 0; j < QK / 2; j++) {
                int q = Blocks.u8(src, at + 2 + j);
                dst[y + j] = d * KVALUES[q & 0xF];
                dst[y + j + QK / 2] = d * KVALUES[q >>> 4];
            }
        }
    }
}
