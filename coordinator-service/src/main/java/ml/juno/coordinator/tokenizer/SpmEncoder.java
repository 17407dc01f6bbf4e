package ml.juno.coordinator.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * SentencePiece BPE (llama.cpp's {@code llm_tokenizer_spm}): start from UTF-8 characters, repeatedly
 * merge the adjacent pair whose concatenation is the highest-scoring token (ties: leftmost), then emit
 * each final piece as its token or, failing that, as byte tokens {@code <0xNN>}.
 *
 * <p>The merge loop uses a priority queue of candidate pairs over a doubly linked list of symbols, so
 * a text of n characters costs O(n log n), never a rescan of all pairs per merge. The text is further
 * cut into independent chunks at every point where no token of the vocabulary contains the two
 * characters on either side next to each other: no merge can ever cross such a point, so the result is
 * the same as merging the whole text at once, while the queue stays small and cache-resident.
 */
final class SpmEncoder {
    private static final int MIN_CHUNK_BYTES = 64;

    private final TokenLookup lookup;
    private final float[] scores;
    private final int[] byteTokens; // byte value → token id of <0xNN> (or the 1-byte token), -1 if none
    private final int unk;
    private final LongSet adjacentPairs; // (char, next char) pairs that occur inside some token

    SpmEncoder(TokenLookup lookup, List<String> texts, float[] scores, int unk) {
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
        adjacentPairs = new LongSet(texts.size() * 8);
        for (String t : texts) {
            byte[] b = t.getBytes(StandardCharsets.UTF_8);
            int prevKey = -1;
            for (int off = 0; off < b.length; ) {
                int l = Math.min(Utf8.seqLen(b[off]), b.length - off);
                int key = charKey(b, off, l);
                if (prevKey != -1) {
                    adjacentPairs.add(pairKey(prevKey, key));
                }
                prevKey = key;
                off += l;
            }
        }
    }

    /** The (up to 4) bytes of one UTF-8 character packed into an int. */
    private static int charKey(byte[] b, int off, int len) {
        int k = 0;
        for (int i = 0; i < len; i++) {
            k = (k << 8) | (b[off + i] & 0xFF);
        }
        return k | (len << 29);
    }

    private static long pairKey(int left, int right) {
        return ((long) left << 32) | (right & 0xFFFFFFFFL);
    }

    /** Per-call scratch: symbols of the current chunk and the merge queue. */
    private static final class Scratch {
        int[] start = new int[256];
        int[] size = new int[256];
        int[] prev = new int[256];
        int[] next = new int[256];
        final MergeHeap heap = new MergeHeap();

        void ensure(int n) {
            if (start.length < n) {
                int c = Math.max(n, start.length * 2);
                start = new int[c];
                size = new int[c];
                prev = new int[c];
                next = new int[c];
            }
        }
    }

    /**
     * Tokenizes {@code text[0, len)} (already whitespace-escaped to U+2581) and appends the ids to
     * {@code out}.
     */
    void encode(byte[] text, int len, IntList out) {
        Scratch s = new Scratch();
        int chunkStart = 0;
        int prevKey = -1;
        for (int off = 0; off < len; ) {
            int l = Math.min(Utf8.seqLen(text[off]), len - off);
            int key = charKey(text, off, l);
            if (prevKey != -1 && off - chunkStart >= MIN_CHUNK_BYTES && !adjacentPairs.contains(pairKey(prevKey, key))) {
                encodeChunk(s, text, chunkStart, off, out);
                chunkStart = off;
            }
            prevKey = key;
            off += l;
        }
        if (chunkStart < len) {
            encodeChunk(s, text, chunkStart, len, out);
        }
    }

    private void encodeChunk(Scratch s, byte[] text, int from, int to, IntList out) {
        s.ensure(to - from);
        int[] start = s.start;
        int[] size = s.size;
        int[] prev = s.prev;
        int[] next = s.next;
        int n = 0;
        for (int off = from; off < to; ) {
            int l = Math.min(Utf8.seqLen(text[off]), to - off);
            start[n] = off;
            size[n] = l;
            prev[n] = n - 1;
            off += l;
            next[n] = off == to ? -1 : n + 1;
            n++;
        }
        MergeHeap heap = s.heap;
        heap.clear();
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

    /** Maps a float to an int with the same ordering (NaN treated as lowest, -0 as 0). */
    private static long sortable(float f) {
        if (Float.isNaN(f)) {
            return Integer.MIN_VALUE + 1;
        }
        int bits = f == 0f ? 0 : Float.floatToIntBits(f);
        return bits ^ ((bits >> 31) & 0x7FFFFFFF);
    }
}
