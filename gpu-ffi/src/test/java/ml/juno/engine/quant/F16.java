package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/** F16: IEEE binary16, widened exactly to float. */
public final class F16 {

    public static final GgmlType TYPE = GgmlType.F16;

    private F16() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("F16", 1, dst, dstOffset, count);
        for (int i = 0; i < count; i++) {
            dst[dstOffset + i] = Float.float16ToFloat(src.get(Blocks.LE_SHORT, offset + 2L * i));
        }
    }
}
