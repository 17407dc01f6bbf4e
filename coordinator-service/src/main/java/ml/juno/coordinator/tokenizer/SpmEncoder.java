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
    private final LongIntMap charPieces;  // character (packed UTF-8) → piece id
    private final LongIntMap pairs;       // (left piece, right piece) → token id of the concatenation

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
        int n = texts.size();
        adjacentPairs = new LongSet(n * 8);
        charPieces = new LongIntMap(n);
        pairs = new LongIntMap(n * 6);
        byte[][] utf8 = new byte[n][];
        int[] bounds = new int[64];
        // single-character tokens keep their token id as piece id
        for (int id = 0; id < n; id++) {
            byte[] b = lookup.bytes(id);
            utf8[id] = b;
            if (b.length > 0 && Utf8.seqLen(b[0]) >= b.length) {
                charPieces.putIfAbsent(charKey(b, 0, b.length), id);
            }
        }
        int nextPiece = n;
        for (int id = 0; id < n; id++) {
            byte[] b = utf8[id];
            int chars = 0;
            int prevKey = -1;
            for (int off = 0; off < b.length; ) {
                int l = Math.min(Utf8.seqLen(b[off]), b.length - off);
                int key = charKey(b, off, l);
                if (prevKey != -1) {
                    adjacentPairs.add(pairKey(prevKey, key));
                }
                if (chars + 1 >= bounds.length) {
                    bounds = java.util.Arrays.copyOf(bounds, bounds.length * 2);
                }
                bounds[chars++] = off;
                prevKey = key;
                off += l;
            }
            bounds[chars] = b.length;
            // every split of the token into two symbols (a character or a token on each side) merges to it
            for (int k = 1; k < chars; k++) {
                int left = pieceOf(b, 0, bounds[k], k == 1, nextPiece);
                if (left == nextPiece) {
                    nextPiece++;
                }
                int right = pieceOf(b, bounds[k], b.length, k == chars - 1, nextPiece);
                if (right == nextPiece) {
                    nextPiece++;
                }
                if (left >= 0 && right >= 0) {
                    pairs.putIfAbsent(pairKey(left, right), id);
                }
            }
        }
    }

    /**
     * Piece id of {@code b[from, to)}: a single character gets its token id or a fresh id beyond the
     * vocabulary ({@code fresh}); a longer string must be a token, else -1 (it can never be a symbol).
     */
    private int pieceOf(byte[] b, int from, int to, boolean singleChar, int fresh) {
        if (singleChar) {
            return charPieces.putIfAbsent(charKey(b, from, to - from), fresh);
        }
        return lookup.find(b, from, to - from);
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
        int[] piece = new int[256];
        final MergeHeap heap = new MergeHeap();

        void ensure(int n) {
            if (start.length < n) {
                int c = Math.max(n, start.length * 2);
                start = new int[c];
                size = new int[c];
                piece = new int[c];
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
        int[] piece = s.piece;
        int n = 0;
        for (int off = from; off < to; ) {
            int l = Math.min(Utf8.seqLen(text[off]), to - off);
            start[n] = off;
            size[n] = l;
            piece[n] = charPieces.get(charKey(text, off, l), -1);
            prev[n] = n - 1;
            off += l;
            next[n] = off == to ? -1 : n + 1;
            n++;
        }
        MergeHeap heap = s.heap;
        heap.clear();
        for (int i = 1; i < n; i++) {
            tryAdd(heap, piece, i - 1, i);
        }
        while (!heap.isEmpty()) {
            heap.pop();
            int left = heap.topA;
            int right = heap.topB;
            int merged = heap.topC;
            // stale if either side was merged away or has changed since the pair was queued
            if (size[left] == 0 || size[right] == 0 || pairs.get(pairKey(piece[left], piece[right]), -1) != merged) {
                continue;
            }
            size[left] += size[right];
            size[right] = 0;
            piece[left] = merged;
            next[left] = next[right];
            if (next[right] >= 0) {
                prev[next[right]] = left;
            }
            tryAdd(heap, piece, prev[left], left);
            tryAdd(heap, piece, left, next[left]);
        }
        for (int i = 0; i != -1; i = next[i]) {
            int id = piece[i];
            if (id >= 0 && id < lookup.size()) { // else a character outside the vocabulary
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

    private void tryAdd(MergeHeap heap, int[] piece, int left, int right) {
        if (left < 0 || right < 0 || piece[left] < 0 || piece[right] < 0) {
            return;
        }
        int id = pairs.get(pairKey(piece[left], piece[right]), -1);
        if (id < 0) {
            return;
        }
        // max-heap on score, then min on left index: invert the order-preserving int image of the score
        long ordered = sortable(scores[id]);
        heap.push(((-ordered) << 32) | left, left, right, id);
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
