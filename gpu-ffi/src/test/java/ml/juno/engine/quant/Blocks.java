package ml.juno.engine.quant;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/** Little-endian, unaligned reads of block fields (ggml blocks are packed structs, GGUF is little-endian). */
final class Blocks {

    static final ValueLayout.OfShort LE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final ValueLayout.OfFloat LE_FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private Blocks() {}

    /** An fp16 field as float. */
    static float f16(MemorySegment s, long at) {
        return Float.float16ToFloat(s.get(LE_SHORT, at));
    }

    /** Unsigned byte. */
    static int u8(MemorySegment s, long at) {
        return s.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
    }

    /** Signed byte. */
    static int i8(MemorySegment s, long at) {
        return s.get(ValueLayout.JAVA_BYTE, at);
    }

    /** Checks a dequantization request: whole blocks, destination large enough. */
    static void check(String format, int blockSize, float[] dst, int dstOffset, int count) {
        if (count < 0 || count % blockSize != 0) {
            throw new IllegalArgumentException(format + ": count " + count + " is not a multiple of the block size " + blockSize);
        }
        if (dstOffset < 0 || dstOffset > dst.length - count) {
            throw new IndexOutOfBoundsException(format + ": dst[" + dstOffset + ", " + ((long) dstOffset + count) + ") outside length " + dst.length);
        }
    }
}
