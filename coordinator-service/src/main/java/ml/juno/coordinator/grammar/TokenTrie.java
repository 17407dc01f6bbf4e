package ml.juno.coordinator.grammar;

import java.util.Arrays;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.function.IntFunction;

/**
 * The vocabulary's byte strings as a trie, for {@link GrammarMatcher#fillMask}: tokens that share a prefix share
 * its path, so the matcher checks each prefix once per step. Built once per vocabulary ({@link #cached}) and shared
 * read-only by every sequence. Tokens without bytes (control tokens) are not in it: a grammar never allows them,
 * except the end-of-generation tokens the caller adds when the grammar accepts.
 *
 * <p>Layout: nodes are numbered breadth-first, so the children of a node are contiguous:
 * {@code childStart[t] .. childStart[t + 1])}, each with the byte of its edge in {@code label}; the tokens whose
 * bytes end at node t are {@code tokenIds[tokenStart[t] .. tokenStart[t + 1])}. Node 0 is the root.
 */
public final class TokenTrie {
    private static final Map<Object, TokenTrie> CACHE = new WeakHashMap<>();

    final int[] childStart; // [nodes + 1]
    final byte[] label;     // [nodes]
    final int[] tokenStart; // [nodes + 1]
    final int[] tokenIds;   // [tokens in the trie]
    // subtree summaries, for marking a whole subtree at once where the grammar lets any of its bytes through
    final long[] subAscii;  // [nodes * 2] the ASCII bytes on the edges of node t's subtree (its own edge included)
    final byte[] subFlags;  // [nodes] SUB_HIGH: a byte >= 0x80 in the subtree; SUB_BAD_UTF8: a path through it is not UTF-8
    final int[] subStart;   // [nodes] node t's subtree's tokens are subTokens[subStart[t] .. subEnd[t])
    final int[] subEnd;
    final int[] subTokens;  // [tokens in the trie] in depth-first order
    final int[] subHeight;  // [nodes] the longest path in bytes from node t's edge (counted) to a leaf below it
    final int maxHeight;    // the longest token in bytes
    static final byte SUB_HIGH = 1;
    static final byte SUB_BAD_UTF8 = 2;
    private final byte[][] pieces; // [vocab]
    private final int vocab;

    private TokenTrie(int[] childStart, byte[] label, int[] tokenStart, int[] tokenIds, byte[][] pieces) {
        this.childStart = childStart;
        this.label = label;
        this.tokenStart = tokenStart;
        this.tokenIds = tokenIds;
        this.pieces = pieces;
        this.vocab = pieces.length;
        int nodes = label.length;
        subAscii = new long[nodes * 2];
        subFlags = new byte[nodes];
        subStart = new int[nodes];
        subEnd = new int[nodes];
        subTokens = new int[tokenIds.length];
        subHeight = new int[nodes];
        // UTF-8 validity of the path to each node (breadth-first order: parents first); state = continuation bytes due
        byte[] due = new byte[nodes];
        boolean[] bad = new boolean[nodes];
        for (int t = 0; t < nodes; t++) {
            for (int c = childStart[t]; c < childStart[t + 1]; c++) {
                int b = label[c] & 0xFF;
                if (bad[t]) {
                    bad[c] = true;
                } else if (due[t] > 0) {
                    bad[c] = (b & 0xC0) != 0x80;
                    due[c] = (byte) (due[t] - 1);
                } else if (b < 0x80) {
                    due[c] = 0;
                } else if (b >= 0xC2 && b <= 0xDF) {
                    due[c] = 1;
                } else if ((b & 0xF0) == 0xE0) {
                    due[c] = 2;
                } else if (b >= 0xF0 && b <= 0xF4) {
                    due[c] = 3;
                } else {
                    bad[c] = true;
                }
            }
        }
        // children have higher ids than parents: summaries bottom-up in reverse id order
        for (int t = nodes - 1; t >= 0; t--) {
            int b = label[t] & 0xFF;
            if (t > 0) {
                if (b < 0x80) {
                    subAscii[2 * t + (b >>> 6)] |= 1L << (b & 63);
                } else {
                    subFlags[t] |= SUB_HIGH;
                }
                if (bad[t]) {
                    subFlags[t] |= SUB_BAD_UTF8;
                }
            }
            int below = 0;
            for (int c = childStart[t]; c < childStart[t + 1]; c++) {
                subAscii[2 * t] |= subAscii[2 * c];
                subAscii[2 * t + 1] |= subAscii[2 * c + 1];
                subFlags[t] |= subFlags[c];
                below = Math.max(below, subHeight[c]);
            }
            subHeight[t] = below + (t > 0 ? 1 : 0);
        }
        maxHeight = nodes == 0 ? 0 : subHeight[0];
        // depth-first token order, so that a subtree's tokens are one range (iterative, the trie may be deep)
        int[] stack = new int[nodes];
        int[] next = new int[nodes];
        int sp = 0;
        int k = 0;
        stack[0] = 0;
        next[0] = childStart[0];
        subStart[0] = 0;
        for (int i = tokenStart[0]; i < tokenStart[1]; i++) {
            subTokens[k++] = tokenIds[i];
        }
        while (sp >= 0) {
            int t = stack[sp];
            if (next[sp] < childStart[t + 1]) {
                int c = next[sp]++;
                subStart[c] = k;
                for (int i = tokenStart[c]; i < tokenStart[c + 1]; i++) {
                    subTokens[k++] = tokenIds[i];
                }
                stack[++sp] = c;
                next[sp] = childStart[c];
            } else {
                subEnd[t] = k;
                sp--;
            }
        }
    }

    /**
     * The trie of a vocabulary, built on first use and kept while {@code vocabularyKey} (the tokenizer) lives.
     *
     * @param pieceOf the bytes of token id (empty for control tokens)
     */
    public static TokenTrie cached(Object vocabularyKey, int vocabSize, IntFunction<byte[]> pieceOf) {
        synchronized (CACHE) {
            TokenTrie t = CACHE.get(vocabularyKey);
            if (t == null || t.vocab != vocabSize) {
                byte[][] pieces = new byte[vocabSize][];
                for (int i = 0; i < vocabSize; i++) {
                    pieces[i] = pieceOf.apply(i);
                }
                t = of(pieces);
                CACHE.put(vocabularyKey, t);
            }
            return t;
        }
    }

    /** A trie of {@code pieces[id]}, the bytes of each token (empty: not in the trie). */
    public static TokenTrie of(byte[][] pieces) {
        int n = pieces.length;
        Integer[] order = new Integer[n];
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (pieces[i] != null && pieces[i].length > 0) {
                order[m++] = i;
            }
        }
        Integer[] sorted = Arrays.copyOf(order, m);
        Arrays.sort(sorted, (a, b) -> Arrays.compareUnsigned(pieces[a], pieces[b]));
        // build a linked trie (first child / next sibling), children in byte order since the input is sorted
        int cap = 1024;
        int[] first = new int[cap];
        int[] next = new int[cap];
        int[] last = new int[cap];
        byte[] lab = new byte[cap];
        int[] tokHead = new int[cap];
        int[] tokNext = new int[m];
        Arrays.fill(first, -1);
        Arrays.fill(tokHead, -1);
        int count = 1;
        for (int k = 0; k < m; k++) {
            int id = sorted[k];
            byte[] p = pieces[id];
            int t = 0;
            for (byte b : p) {
                int c = last[t] > 0 && lab[last[t]] == b && first[t] >= 0 ? last[t] : -1;
                if (c < 0) {
                    if (count == cap) {
                        cap *= 2;
                        first = Arrays.copyOf(first, cap);
                        next = Arrays.copyOf(next, cap);
                        last = Arrays.copyOf(last, cap);
                        lab = Arrays.copyOf(lab, cap);
                        tokHead = Arrays.copyOf(tokHead, cap);
                        Arrays.fill(first, count, cap, -1);
                        Arrays.fill(tokHead, count, cap, -1);
                    }
                    c = count++;
                    lab[c] = b;
                    next[c] = -1;
                    if (first[t] < 0) {
                        first[t] = c;
                    } else {
                        next[last[t]] = c;
                    }
                    last[t] = c;
                }
                t = c;
            }
            tokNext[k] = tokHead[t];
            tokHead[t] = k;
        }
        // renumber breadth-first so that children are contiguous
        int[] bfs = new int[count];
        int[] newId = new int[count];
        int head = 0;
        int tail = 1;
        bfs[0] = 0;
        while (head < tail) {
            int t = bfs[head++];
            for (int c = first[t]; c >= 0; c = next[c]) {
                newId[c] = tail;
                bfs[tail++] = c;
            }
        }
        int[] childStart = new int[count + 1];
        byte[] label = new byte[count];
        int[] tokenStart = new int[count + 1];
        int[] tokenIds = new int[m];
        int nextChild = 1;
        int nextTok = 0;
        for (int i = 0; i < count; i++) {
            int t = bfs[i];
            childStart[i] = nextChild;
            for (int c = first[t]; c >= 0; c = next[c]) {
                nextChild++;
            }
            label[i] = lab[t];
            tokenStart[i] = nextTok;
            for (int k = tokHead[t]; k >= 0; k = tokNext[k]) {
                tokenIds[nextTok++] = sorted[k];
            }
        }
        childStart[count] = nextChild;
        tokenStart[count] = nextTok;
        byte[][] copy = new byte[n][];
        for (int i = 0; i < n; i++) {
            copy[i] = pieces[i] == null ? new byte[0] : pieces[i].clone();
        }
        return new TokenTrie(childStart, label, tokenStart, tokenIds, copy);
    }

    public int vocabSize() {
        return vocab;
    }

    public int nodeCount() {
        return label.length;
    }

    /** The bytes of token {@code id} (empty for control tokens). Not a copy: do not change it. */
    byte[] piece(int id) {
        return pieces[id];
    }

    /** Feeds token {@code id}'s bytes to {@code m}; false (and {@code m} unchanged) if the grammar does not allow them. */
    public boolean accept(GrammarMatcher m, int id) {
        if (id < 0 || id >= vocab) {
            throw new IllegalArgumentException("token " + id + " outside the vocabulary of " + vocab);
        }
        byte[] p = pieces[id];
        return p.length > 0 && m.advance(p, 0, p.length);
    }
}
