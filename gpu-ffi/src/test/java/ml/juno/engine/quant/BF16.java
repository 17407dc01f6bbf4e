package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/** BF16: the high 16 bits of an IEEE float. */
public final class BF16 {

    public static final GgmlType TYPE = GgmlType.BF16;

    private BF16() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("BF16", 1, dst, dstOffset, count);
        for (int i = 0; i < count; i++) {
            dst[dstOffset + i] = Float.intBitsToFloat(src.get(Blocks.LE_SHORT, offset + 2L * i) << 16);
        }
    }
}
