package ml.juno.coordinator.tokenizer;

/**
 * SentencePiece BPE (llama.cpp's {@code llm_tokenizer_spm}): start from UTF-8 characters, repeatedly
 * merge the adjacent pair whose concatenation is the highest-scoring token (ties: leftmost), then emit
 * each final piece as its token or, failing that, as byte tokens {@code <0xNN>}.
 *
 * <p>The merge loop uses a priority queue of candidate pairs over a doubly linked list of symbols, so
 * a text of n characters costs O(n log n), never a rescan of all pairs per merge.
 */
final class SpmEncoder {
    private final TokenLookup lookup;
    private final float[] scores;
    private final int[] byteTokens; // byte value → token id of <0xNN> (or the 1-byte token), -1 if none
    private final int unk;

    SpmEncoder(TokenLookup lookup, float[] scores, int unk) {
        this.lookup = lookup;
        this.scores = scores;
        this.unk = unk;
        this.byteTokens = new int[256];
        for (int b = 0; b < 256; b++) {
            int id = lookup.find(String.format("<0x%02X>", b));
            if (id < 0) {
                id = lookup.find(new byte[] {(byte) b}, 0, 1);
            }
            byteTokens[b] = id;
        }
    }

    /**
     * Tokenizes {@code text[0, len)} (already whitespace-escaped to U+2581) and appends the ids to
     * {@code out}.
     */
    void encode(byte[] text, int len, IntList out) {
        if (len == 0) {
            return;
        }
        // symbols: one per UTF-8 character, as a linked list over byte ranges
        int[] start = new int[len];
        int[] size = new int[len];
        int[] prev = new int[len];
        int[] next = new int[len];
        int n = 0;
        for (int off = 0; off < len; ) {
            int l = Math.min(Utf8.seqLen(text[off]), len - off);
            start[n] = off;
            size[n] = l;
            prev[n] = n - 1;
            off += l;
            next[n] = off == len ? -1 : n + 1;
            n++;
        }
        MergeHeap heap = new MergeHeap();
        for (int i = 1; i < n; i++) {
            tryAdd(heap, text, start, size, i - 1, i);
        }
        while (!heap.isEmpty()) {
            heap.pop();
            int left = heap.topA;
            int right = heap.topB;
            int merged = heap.topC;
            // stale if either side was merged away or has grown since the pair was queued
            if (size[left] == 0 || size[right] == 0 || size[left] + size[right] != merged) {
                continue;
            }
            size[left] += size[right];
            size[right] = 0;
            next[left] = next[right];
            if (next[right] >= 0) {
                prev[next[right]] = left;
            }
            tryAdd(heap, text, start, size, prev[left], left);
            tryAdd(heap, text, start, size, left, next[left]);
        }
        for (int i = 0; i != -1; i = next[i]) {
            int id = lookup.find(text, start[i], size[i]);
            if (id >= 0) {
                out.add(id);
                continue;
            }
            for (int k = 0; k < size[i]; k++) {
                int bt = byteTokens[text[start[i] + k] & 0xFF];
                if (bt >= 0) {
                    out.add(bt);
                } else if (unk >= 0) {
                    out.add(unk);
                } else {
                    throw new IllegalArgumentException("vocabulary has neither a byte token for 0x"
                            + Integer.toHexString(text[start[i] + k] & 0xFF) + " nor an unknown token");
                }
            }
        }
    }

    private void tryAdd(MergeHeap heap, byte[] text, int[] start, int[] size, int left, int right) {
        if (left < 0 || right < 0) {
            return;
        }
        int total = size[left] + size[right];
        int id = lookup.find(text, start[left], total);
        if (id < 0) {
            return;
        }
        // max-heap on score, then min on left index: invert the order-preserving int image of the score
        long ordered = sortable(scores[id]);
        heap.push(((-ordered) << 32) | left, left, right, total);
    }

    /** Maps a float to an int with the same ordering (NaN treated as lowest). */
    private static long sortable(float f) {
        if (Float.isNaN(f)) {
            return Integer.MIN_VALUE + 1;
        }
        int bits = f == 0f ? 0 : Float.floatToIntBits(f);
        return bits ^ ((bits >> 31) & 0x7FFFFFFF);
    }
}
