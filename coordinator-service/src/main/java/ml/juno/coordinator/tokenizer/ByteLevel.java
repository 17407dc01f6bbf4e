package ml.juno.coordinator.tokenizer;

/**
 * GPT-2's reversible byte ↔ unicode mapping: printable Latin-1 bytes map to themselves, the other 68
 * bytes to U+0100.. in byte order, so every byte sequence becomes a string of visible characters.
 */
final class ByteLevel {
    /** byte value → code point. */
    private static final char[] BYTE_TO_CHAR = new char[256];
    /** code point (< 0x144) → byte value, or -1. */
    private static final short[] CHAR_TO_BYTE = new short[0x144];

    static {
        java.util.Arrays.fill(CHAR_TO_BYTE, (short) -1);
        int n = 0;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            char c = printable ? (char) b : (char) (256 + n++);
            BYTE_TO_CHAR[b] = c;
            CHAR_TO_BYTE[c] = (short) b;
        }
    }

    private ByteLevel() {
    }

    static char encode(int b) {
        return BYTE_TO_CHAR[b & 0xFF];
    }

    /** The byte a code point stands for, or -1 when it is not part of the mapping. */
    static int decode(int cp) {
        return cp >= 0 && cp < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[cp] : -1;
    }

    static String encode(byte[] b, int off, int len) {
        char[] cs = new char[len];
        for (int i = 0; i < len; i++) {
            cs[i] = BYTE_TO_CHAR[b[off + i] & 0xFF];
        }
        return new String(cs);
    }
}
