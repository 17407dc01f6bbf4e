package ml.juno.coordinator.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

/**
 * Exact-match lookup from a UTF-8 byte range to a token id, without allocating: open addressing over
 * the tokens' UTF-8 bytes (FNV-1a hashes, linear probing).
 */
final class TokenLookup {
    private final byte[][] bytes;   // [id] → UTF-8 of the token text
    private final int[] slots;      // hash slot → id + 1, 0 = empty
    private final int mask;
    private final int maxLen;

    TokenLookup(List<String> texts) {
        int n = texts.size();
        bytes = new byte[n][];
        int cap = Integer.highestOneBit(Math.max(4, n * 2)) << 1;
        slots = new int[cap];
        mask = cap - 1;
        int longest = 0;
        for (int id = 0; id < n; id++) {
            byte[] b = texts.get(id).getBytes(StandardCharsets.UTF_8);
            bytes[id] = b;
            longest = Math.max(longest, b.length);
            int s = hash(b, 0, b.length) & mask;
            while (true) {
                int cur = slots[s];
                if (cur == 0) {
                    slots[s] = id + 1;
                    break;
                }
                if (Arrays.equals(bytes[cur - 1], b)) {
                    throw new IllegalArgumentException("duplicate token in vocabulary: '" + texts.get(id)
                            + "' has ids " + (cur - 1) + " and " + id);
                }
                s = (s + 1) & mask;
            }
        }
        maxLen = longest;
    }

    /** Number of tokens. */
    int size() {
        return bytes.length;
    }

    /** Length in bytes of the longest token. */
    int maxLength() {
        return maxLen;
    }

    byte[] bytes(int id) {
        return bytes[id];
    }

    /** The id of the token whose text is exactly {@code b[off, off+len)}, or -1. */
    int find(byte[] b, int off, int len) {
        if (len > maxLen) {
            return -1;
        }
        int s = hash(b, off, len) & mask;
        while (true) {
            int cur = slots[s];
            if (cur == 0) {
                return -1;
            }
            byte[] t = bytes[cur - 1];
            if (t.length == len && Arrays.equals(t, 0, len, b, off, off + len)) {
                return cur - 1;
            }
            s = (s + 1) & mask;
        }
    }

    int find(String text) {
        byte[] b = text.getBytes(StandardCharsets.UTF_8);
        return find(b, 0, b.length);
    }

    private static int hash(byte[] b, int off, int len) {
        int h = 0x811C9DC5;
        for (int i = off; i < off + len; i++) {
            h = (h ^ (b[i] & 0xFF)) * 0x01000193;
        }
        return h ^ (h >>> 16);
    }
}
