package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/** F32: little-endian IEEE floats, copied as they are. */
public final class F32 {

    public static final GgmlType TYPE = GgmlType.F32;

    private F32() {}

    public static void dequantize(MemorySegment src, long offset, float[] dst, int dstOffset, int count) {
        Blocks.check("F32", 1, dst, dstOffset, count);
        MemorySegment.copy(src, Blocks.LE_FLOAT, offset, dst, dstOffset, count);
    }
}
