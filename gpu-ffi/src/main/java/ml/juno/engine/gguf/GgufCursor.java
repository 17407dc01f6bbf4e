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
 *
 * <p>Fields are decoded from a heap window refilled from the mapping one chunk at a time: a vocabulary is 10^5 small
 * strings, and plain array reads keep the first open fast even before the JIT has compiled anything.
 */
final class GgufCursor {

    private static final int CHUNK = 64 << 10;

    private final MemorySegment seg;
    private final long size;
    private long pos;
    /** bytes [winStart, winStart + winLen) of the file. */
    private byte[] win = new byte[0];
    private long winStart;
    private int winLen;
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

    /** Checks that n bytes remain and makes them readable at {@code win[index()]}. */
    private int need(long n, String field) throws GgufFormatException {
        if (n > size - pos) {
            throw new GgufFormatException(field, pos, "needs " + n + " bytes but only " + (size - pos) + " remain (file is " + size + " bytes)");
        }
        return window((int) n);
    }

    private int window(int n) {
        if (pos < winStart || pos + n > winStart + winLen) {
            int len = (int) Math.min(Math.max(n, CHUNK), size - pos);
            if (win.length < len) {
                win = new byte[len];
            }
            MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, pos, win, 0, len);
            winStart = pos;
            winLen = len;
        }
        return (int) (pos - winStart);
    }

    byte u8(String field) throws GgufFormatException {
        int i = need(1, field);
        pos += 1;
        return win[i];
    }

    short u16(String field) throws GgufFormatException {
        int i = need(2, field);
        pos += 2;
        return (short) ((win[i] & 0xFF) | (win[i + 1] & 0xFF) << 8);
    }

    int u32(String field) throws GgufFormatException {
        int i = need(4, field);
        pos += 4;
        return le32(i);
    }

    long u64(String field) throws GgufFormatException {
        int i = need(8, field);
        pos += 8;
        return le64(i);
    }

    float f32(String field) throws GgufFormatException {
        return Float.intBitsToFloat(u32(field));
    }

    double f64(String field) throws GgufFormatException {
        return Double.longBitsToDouble(u64(field));
    }

    private int le32(int i) {
        return (win[i] & 0xFF) | (win[i + 1] & 0xFF) << 8 | (win[i + 2] & 0xFF) << 16 | (win[i + 3] & 0xFF) << 24;
    }

    private long le64(int i) {
        return (le32(i) & 0xFFFF_FFFFL) | (long) le32(i + 4) << 32;
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
        long n = le64(window(8));
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
        int i = window(len);
        String s;
        if (strict) {
            try {
                s = strictUtf8.decode(ByteBuffer.wrap(win, i, len)).toString();
            } catch (CharacterCodingException e) {
                throw new GgufFormatException(name(field, index), at, "not valid UTF-8");
            }
        } else {
            s = new String(win, i, len, StandardCharsets.UTF_8);
        }
        pos += len;
        return s;
    }

    private static String name(String field, int index) {
        return index < 0 ? field : field + "[" + index + "]";
    }

    /** {@code n} little-endian values of {@code layout}'s size straight from the mapping into {@code dst}. */
    void bulk(Object dst, ValueLayout layout, int n, String field) throws GgufFormatException {
        long bytes = (long) n * layout.byteSize();
        if (bytes > size - pos) {
            throw new GgufFormatException(field, pos, "needs " + bytes + " bytes but only " + (size - pos) + " remain");
        }
        MemorySegment.copy(seg, layout.withOrder(ByteOrder.LITTLE_ENDIAN), pos, dst, 0, n);
        pos += bytes;
    }
}
