package ml.juno.engine.gguf;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * A bounds-checked little-endian reader over the mapped file. Every read checks the remaining bytes first and throws
 * {@link GgufFormatException} naming the field and its offset, so a truncated or hostile file never reads past the
 * end and never makes us allocate more than the file could hold.
 */
final class GgufCursor {

    private static final ValueLayout.OfByte U8 = ValueLayout.JAVA_BYTE;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private final MemorySegment seg;
    private final long size;
    private long pos;
    /** Reused for string bytes; grows to the longest string read. */
    private byte[] scratch = new byte[256];
    private final CharsetDecoder strictUtf8 = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);

    GgufCursor(MemorySegment seg) {
        this.seg = seg;
        this.size = seg.byteSize();
    }

    long position() {
        return pos;
    }

    long remaining() {
        return size - pos;
    }

    long size() {
        return size;
    }

    private void need(long n, String field) throws GgufFormatException {
        if (n > size - pos) {
            throw new GgufFormatException(field, pos, "needs " + n + " bytes but only " + (size - pos) + " remain (file is " + size + " bytes)");
        }
    }

    byte u8(String field) throws GgufFormatException {
        need(1, field);
        return seg.get(U8, pos++);
    }

    short u16(String field) throws GgufFormatException {
        need(2, field);
        short v = seg.get(U16, pos);
        pos += 2;
        return v;
    }

    int u32(String field) throws GgufFormatException {
        need(4, field);
        int v = seg.get(U32, pos);
        pos += 4;
        return v;
    }

    long u64(String field) throws GgufFormatException {
        need(8, field);
        long v = seg.get(U64, pos);
        pos += 8;
        return v;
    }

    float f32(String field) throws GgufFormatException {
        need(4, field);
        float v = seg.get(F32, pos);
        pos += 4;
        return v;
    }

    double f64(String field) throws GgufFormatException {
        need(8, field);
        double v = seg.get(F64, pos);
        pos += 8;
        return v;
    }

    /**
     * A count of items that each take at least {@code minItemBytes}: refused when the rest of the file could not
     * hold that many, so the caller can allocate for it safely.
     */
    int count(String field, long minItemBytes, int max) throws GgufFormatException {
        long at = pos;
        long n = u64(field);
        long fits = minItemBytes == 0 ? Long.MAX_VALUE : remaining() / minItemBytes;
        if (n < 0 || n > fits) {
            throw new GgufFormatException(field, at, "count " + Long.toUnsignedString(n) + " cannot fit in the "
                    + remaining() + " bytes left in the file");
        }
        if (n > max) {
            throw new GgufFormatException(field, at, "count " + n + " exceeds the limit of " + max);
        }
        return (int) n;
    }

    /** A GGUF string: u64 byte length then UTF-8 bytes. {@code strict} refuses malformed UTF-8 (keys and names). */
    String string(String field, boolean strict) throws GgufFormatException {
        return string(field, -1, strict);
    }

    /**
     * Element {@code index} of a string array named {@code field} (-1: not an element). The field name is only
     * built when something is wrong: vocabularies hold 10^5 strings.
     */
    String string(String field, int index, boolean strict) throws GgufFormatException {
        long at = pos;
        if (8 > size - pos) {
            throw new GgufFormatException(name(field, index) + ".length", pos, "needs 8 bytes but only " + (size - pos) + " remain");
        }
        long n = seg.get(U64, pos);
        pos += 8;
        if (n < 0 || n > remaining()) {
            throw new GgufFormatException(name(field, index) + ".length", at, "string length " + Long.toUnsignedString(n)
                    + " exceeds the " + remaining() + " bytes left in the file");
        }
        if (n > Integer.MAX_VALUE - 16) {
            throw new GgufFormatException(name(field, index) + ".length", at, "string length " + n + " is too large");
        }
        if (n == 0) {
            return "";
        }
        int len = (int) n;
        if (scratch.length < len) {
            scratch = new byte[Math.max(len, scratch.length * 2)];
        }
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, pos, scratch, 0, len);
        String s;
        if (strict) {
            try {
                s = strictUtf8.decode(ByteBuffer.wrap(scratch, 0, len)).toString();
            } catch (CharacterCodingException e) {
                throw new GgufFormatException(name(field, index), at, "not valid UTF-8");
            }
        } else {
            s = new String(scratch, 0, len, StandardCharsets.UTF_8);
        }
        pos += n;
        return s;
    }

    private static String name(String field, int index) {
        return index < 0 ? field : field + "[" + index + "]";
    }

    /** Copies {@code n} raw bytes (already bounds-checked by the caller through {@link #count}). */
    void read(byte[] dst, String field) throws GgufFormatException {
        need(dst.length, field);
        MemorySegment.copy(seg, U8, pos, dst, 0, dst.length);
        pos += dst.length;
    }

    void bulk(Object dst, ValueLayout layout, int n, String field) throws GgufFormatException {
        long bytes = (long) n * layout.byteSize();
        need(bytes, field);
        MemorySegment.copy(seg, layout, pos, dst, 0, n);
        pos += bytes;
    }
}
