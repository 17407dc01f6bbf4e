package ml.juno.coordinator.tokenizer;

import java.nio.charset.StandardCharsets;

/** UTF-8 helpers that behave like llama.cpp's unicode.cpp on the edge cases. */
final class Utf8 {
    private Utf8() {
    }

    /**
     * Encodes a Java string as UTF-8. A lone (unpaired) surrogate becomes U+FFFD instead of the JDK's
     * '?', so hostile input cannot smuggle ASCII into the tokenizer.
     */
    static byte[] encode(String s) {
        int n = s.length();
        byte[] out = new byte[n * 3];
        int o = 0;
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            int cp = c;
            if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                cp = Character.toCodePoint(c, s.charAt(++i));
            } else if (Character.isSurrogate(c)) {
                cp = 0xFFFD;
            }
            o = put(out, o, cp);
        }
        return o == out.length ? out : java.util.Arrays.copyOf(out, o);
    }

    /** Writes one code point; returns the new offset. {@code out} must have 4 bytes of room. */
    static int put(byte[] out, int o, int cp) {
        if (cp < 0x80) {
            out[o++] = (byte) cp;
        } else if (cp < 0x800) {
            out[o++] = (byte) (0xC0 | (cp >> 6));
            out[o++] = (byte) (0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out[o++] = (byte) (0xE0 | (cp >> 12));
            out[o++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
            out[o++] = (byte) (0x80 | (cp & 0x3F));
        } else {
            out[o++] = (byte) (0xF0 | (cp >> 18));
            out[o++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
            out[o++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
            out[o++] = (byte) (0x80 | (cp & 0x3F));
        }
        return o;
    }

    /** Length of the UTF-8 sequence announced by a lead byte (llama.cpp's {@code unicode_len_utf8}). */
    static int seqLen(byte lead) {
        int high = (lead & 0xFF) >> 4;
        if (high < 12) {
            return 1; // ASCII, or a stray continuation byte
        }
        return high < 14 ? 2 : high - 11;
    }

    static String decode(byte[] b, int off, int len) {
        return new String(b, off, len, StandardCharsets.UTF_8);
    }

    /**
     * Decodes code points the way llama.cpp's {@code unicode_cpts_from_utf8} does: an invalid byte
     * becomes U+FFFD and decoding resumes at the next byte. {@code byteStart}, when not null, receives
     * the byte offset of each code point and, at index {@code count}, the total length.
     */
    static int codePoints(byte[] b, int off, int len, int[] cps, int[] byteStart) {
        int end = off + len;
        int n = 0;
        int i = off;
        while (i < end) {
            int c0 = b[i] & 0xFF;
            int cp;
            int size;
            if (c0 < 0x80) {
                cp = c0;
                size = 1;
            } else if ((c0 & 0x40) == 0) {
                cp = -1;
                size = 1;
            } else if ((c0 & 0x20) == 0) {
                size = 2;
                cp = cont(b, i, end, size) ? ((c0 & 0x1F) << 6) | (b[i + 1] & 0x3F) : -1;
            } else if ((c0 & 0x10) == 0) {
                size = 3;
                cp = cont(b, i, end, size)
                        ? ((c0 & 0x0F) << 12) | ((b[i + 1] & 0x3F) << 6) | (b[i + 2] & 0x3F) : -1;
            } else if ((c0 & 0x08) == 0) {
                size = 4;
                cp = cont(b, i, end, size) ? ((c0 & 0x07) << 18) | ((b[i + 1] & 0x3F) << 12)
                        | ((b[i + 2] & 0x3F) << 6) | (b[i + 3] & 0x3F) : -1;
            } else {
                cp = -1;
                size = 1;
            }
            if (cp < 0) {
                cp = 0xFFFD;
                size = 1;
            }
            if (byteStart != null) {
                byteStart[n] = i - off;
            }
            cps[n++] = cp;
            i += size;
        }
        if (byteStart != null) {
            byteStart[n] = len;
        }
        return n;
    }

    private static boolean cont(byte[] b, int i, int end, int size) {
        if (i + size > end) {
            return false;
        }
        for (int k = 1; k < size; k++) {
            if ((b[i + k] & 0xC0) != 0x80) {
                return false;
            }
        }
        return true;
    }

    /**
     * Length of the longest prefix of {@code b[0, len)} that does not end inside an incomplete (but so
     * far valid) multi-byte sequence. Invalid bytes count as complete: they are emitted, not held.
     */
    static int completePrefix(byte[] b, int len) {
        // look back at most 3 bytes for a lead byte whose sequence runs past the end
        for (int back = 1; back <= 3 && back <= len; back++) {
            int c = b[len - back] & 0xFF;
            if ((c & 0xC0) == 0x80) {
                continue; // continuation byte: keep looking for the lead
            }
            int need = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 1;
            return need > back ? len - back : len;
        }
        return len;
    }
}
