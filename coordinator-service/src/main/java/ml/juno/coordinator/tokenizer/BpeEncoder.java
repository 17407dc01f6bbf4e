package ml.juno.coordinator.tokenizer;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Byte-level BPE (llama.cpp's {@code llm_tokenizer_bpe}): each pre-tokenized word is mapped byte by
 * byte to GPT-2's printable characters, then the adjacent pair with the lowest merge rank (ties:
 * leftmost) is merged until no ranked pair remains.
 *
 * <p>Every string that can appear as a symbol (token texts, both sides of each merge and its result)
 * gets an integer "piece id" at construction; token ids are piece ids below the vocabulary size. A
 * merge is then a lookup of the pair of piece ids in a primitive hash table, and the merge loop is a
 * priority queue over a linked list of symbols, with no string building.
 */
final class BpeEncoder {
    private final int vocabSize;
    private final int[] charPiece = new int[0x144];   // byte-level char → piece id (-1 if unknown)
    private final int[] byteToken = new int[256];      // raw byte → token id of its byte-level char, -1
    private final long[] pairKeys;                     // open addressing: (left << 32 | right) + 1, 0 = empty
    private final long[] pairValues;                   // rank << 32 | result piece id
    private final int pairMask;
    private final Map<String, Integer> tokenIds;
    private final boolean ignoreMerges;

    BpeEncoder(List<String> tokens, List<String> merges, boolean ignoreMerges) {
        this.vocabSize = tokens.size();
        this.ignoreMerges = ignoreMerges;
        Map<String, Integer> pieces = new HashMap<>(tokens.size() * 2);
        for (int id = 0; id < tokens.size(); id++) {
            pieces.putIfAbsent(tokens.get(id), id);
        }
        this.tokenIds = Map.copyOf(pieces);
        int cap = Integer.highestOneBit(Math.max(4, merges.size() * 2)) << 1;
        pairKeys = new long[cap];
        pairValues = new long[cap];
        pairMask = cap - 1;
        for (int rank = 0; rank < merges.size(); rank++) {
            String m = merges.get(rank);
            int sp = m.indexOf(' ', 1);
            if (sp < 0) {
                continue; // llama.cpp keeps such entries as an unusable ("", "") pair
            }
            String left = m.substring(0, sp);
            String right = m.substring(sp + 1);
            int l = intern(pieces, left);
            int r = intern(pieces, right);
            int result = intern(pieces, left + right);
            putPair(l, r, rank, result);
        }
        for (int c = 0; c < charPiece.length; c++) {
            Integer p = pieces.get(String.valueOf((char) c));
            charPiece[c] = p == null ? -1 : p;
        }
        for (int b = 0; b < 256; b++) {
            Integer id = tokenIds.get(String.valueOf(ByteLevel.encode(b)));
            byteToken[b] = id == null ? -1 : id;
        }
    }

    private static int intern(Map<String, Integer> pieces, String s) {
        Integer id = pieces.get(s);
        if (id == null) {
            id = pieces.size();
            pieces.put(s, id);
        }
        return id;
    }

    private void putPair(int left, int right, int rank, int result) {
        long k = (((long) left << 32) | (right & 0xFFFFFFFFL)) + 1;
        int s = mix(k) & pairMask;
        while (pairKeys[s] != 0 && pairKeys[s] != k) {
            s = (s + 1) & pairMask;
        }
        if (pairKeys[s] == k) {
            return; // first (lowest) rank wins, as with llama.cpp's map emplace
        }
        pairKeys[s] = k;
        pairValues[s] = ((long) rank << 32) | (result & 0xFFFFFFFFL);
    }

    /** rank << 32 | result piece, or -1 when the pair does not merge. */
    private long findPair(int left, int right) {
        long k = (((long) left << 32) | (right & 0xFFFFFFFFL)) + 1;
        int s = mix(k) & pairMask;
        while (true) {
            long cur = pairKeys[s];
            if (cur == k) {
                return pairValues[s];
            }
            if (cur == 0) {
                return -1;
            }
            s = (s + 1) & pairMask;
        }
    }

    private static int mix(long k) {
        k ^= k >>> 33;
        k *= 0xFF51AFD7ED558CCDL;
        k ^= k >>> 33;
        return (int) k;
    }

    /** Scratch space for one encode call (symbols of the current word and the merge queue). */
    static final class Session {
        int[] piece = new int[64];
        int[] start = new int[64];
        int[] len = new int[64];
        int[] prev = new int[64];
        int[] next = new int[64];
        final MergeHeap heap = new MergeHeap();

        void ensure(int n) {
            if (piece.length < n) {
                int c = Math.max(n, piece.length * 2);
                piece = new int[c];
                start = new int[c];
                len = new int[c];
                prev = new int[c];
                next = new int[c];
            }
        }
    }

    /** Tokenizes one pre-tokenized word {@code utf8[off, off+n)} and appends the ids to {@code out}. */
    void encodeWord(Session s, byte[] utf8, int off, int n, IntList out) {
        if (n == 0) {
            return;
        }
        if (ignoreMerges) {
            Integer whole = tokenIds.get(ByteLevel.encode(utf8, off, n));
            if (whole != null) {
                out.add(whole);
                return;
            }
        }
        s.ensure(n);
        int[] piece = s.piece;
        int[] start = s.start;
        int[] len = s.len;
        int[] prev = s.prev;
        int[] next = s.next;
        for (int i = 0; i < n; i++) {
            piece[i] = charPiece[ByteLevel.encode(utf8[off + i] & 0xFF)];
            start[i] = off + i;
            len[i] = 1;
            prev[i] = i - 1;
            next[i] = i + 1 == n ? -1 : i + 1;
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
            if (len[left] == 0 || len[right] == 0) {
                continue;
            }
            long v = findPair(piece[left], piece[right]);
            // stale if either side has changed since the pair was queued
            if (v < 0 || (int) v != heap.topC) {
                continue;
            }
            piece[left] = heap.topC;
            len[left] += len[right];
            len[right] = 0;
            next[left] = next[right];
            if (next[right] >= 0) {
                prev[next[right]] = left;
            }
            tryAdd(heap, piece, prev[left], left);
            tryAdd(heap, piece, left, next[left]);
        }
        for (int i = 0; i != -1; i = next[i]) {
            int p = piece[i];
            if (p >= 0 && p < vocabSize) {
                out.add(p);
                continue;
            }
            for (int k = 0; k < len[i]; k++) {
                int id = byteToken[utf8[start[i] + k] & 0xFF];
                if (id >= 0) {
                    out.add(id); // llama.cpp silently drops bytes the vocabulary cannot spell
                }
            }
        }
    }

    private void tryAdd(MergeHeap heap, int[] piece, int left, int right) {
        if (left < 0 || right < 0 || piece[left] < 0 || piece[right] < 0) {
            return;
        }
        long v = findPair(piece[left], piece[right]);
        if (v < 0) {
            return;
        }
        heap.push(((v >>> 32) << 32) | left, left, right, (int) v);
    }
}
