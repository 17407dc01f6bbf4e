package ml.juno.coordinator.grammar;

import java.util.Arrays;

/**
 * Where a text stands in a {@link Grammar}: the set of every parse stack the text so far allows (llama.cpp's
 * approach: a pushdown automaton run on all alternatives at once), fed UTF-8 bytes. One per sequence; not
 * thread-safe.
 *
 * <p>A stack is a chain of nodes {@code (pos, parent)}: {@code pos} is the element of {@link Grammar#code} to match
 * next, {@code parent} the node to return to when that alternative ends ({@code -1}: the start rule, ending it
 * accepts). The set holds only stacks whose top is a character class; calls are expanded as soon as they are
 * reached. Nodes are hash-consed, so equal stacks are one node and the set is deduplicated by id; a call in tail
 * position returns straight to its caller's parent, so repetitions ({@code x*} is {@code S ::= x S | ""}) keep
 * stacks flat however long the text grows.
 *
 * <p>{@link #fillMask} walks a {@link TokenTrie} depth-first, advancing the set one byte per trie edge, so a prefix
 * shared by many tokens is checked once. Nodes it creates are undone when it leaves a subtree (an undo log on the
 * intern table); once the buffers have grown it allocates nothing.
 */
public final class GrammarMatcher {
    private final Grammar g;
    private final int[] code;

    // the node arena: [nodes]
    private int[] nodePos = new int[256];
    private int[] nodeParent = new int[256];
    private int[] seen = new int[256];   // stamp of the last set the node was added to
    private int nodes;
    private int stamp;

    // the intern table: open addressing, node id + 1 (0: empty); slots filled since the last commit are logged
    private int[] table = new int[1024];
    private int[] undo = new int[256];
    private int undoLen;
    private int tableEpoch;

    // stack sets live in one buffer; the current state's set is sets[0 .. len)
    private int[] sets = new int[256];
    private int len;
    private boolean accept;
    private int utfAcc;   // the partial code point, when utfLeft > 0
    private int utfLeft;  // continuation bytes still expected
    private int utfMin;   // smallest code point the sequence may encode (overlong forms are invalid)

    // output of expand()
    private int outStart;
    private int outLen;
    private boolean outAccept;

    // the trie walk's levels: [depth]
    private int[] lvStart = new int[64];
    private int[] lvLen = new int[64];
    private int[] lvAcc = new int[64];
    private int[] lvLeft = new int[64];
    private int[] lvMin = new int[64];
    private int[] lvNodes = new int[64];
    private int[] lvUndo = new int[64];
    private int[] lvEpoch = new int[64];
    private int[] lvTrie = new int[64];
    private int[] lvChild = new int[64];
    private int[] lvFree = new int[64];   // where the level's next step result goes in sets
    private int[] lvCached = new int[64]; // steps cached at the level
    private boolean[] lvFix = new boolean[64]; // the level's set is the walk's starting set (see freeAscii)
    private final long[] freeAscii = new long[2]; // ASCII bytes that lead the starting set back to itself
    private boolean freeHigh;                     // so do all characters >= U+0080
    // the chain (see computeChain): free_i, the ASCII bytes that all lead S_i to the same S_(i+1), as S_0 = the set
    private static final int CHAIN = 48;          // free sets chained at most
    private static final int CHAIN_MIN_CLASS = 16; // bytes a class needs to be worth chaining (string characters)
    private final long[] chainFree = new long[2 * CHAIN];
    private final long[] chainInter = new long[2 * CHAIN * CHAIN]; // [(i * CHAIN + h - 1) * 2 + w]: free_i & … & free_(i+h-1)
    private int chainLen;
    private int[] lvChain = new int[64]; // the level's set is S_i of the chain (i), or not on it (-1)
    private static final int CACHE = 8;   // steps cached per level
    private long[] cacheSig = new long[64 * CACHE];
    private int[] cacheStart = new int[64 * CACHE];
    private int[] cacheLen = new int[64 * CACHE];
    private boolean[] cacheAccept = new boolean[64 * CACHE];

    GrammarMatcher(Grammar grammar) {
        this.g = grammar;
        this.code = grammar.code;
        outStart = 0;
        outLen = 0;
        outAccept = false;
        stamp++;
        callRule(g.root, -1);
        len = outLen;
        accept = outAccept;
        undoLen = 0;
    }

    public Grammar grammar() {
        return g;
    }

    /** Stack nodes held (for tests: repetitions must not grow it without bound). */
    int nodeCount() {
        return nodes;
    }

    /** Stacks in the current set. */
    int stackCount() {
        return len;
    }

    /** True if the text so far is a complete sentence (it may still go on). */
    public boolean isAccepting() {
        return accept && utfLeft == 0;
    }

    /** True if the text so far is a complete sentence and nothing may follow it: generation must end here. */
    public boolean isComplete() {
        return accept && utfLeft == 0 && len == 0;
    }

    /**
     * Feeds {@code bytes} (any split of UTF-8, a character may span calls).
     *
     * @return false, leaving the state as it was, if the text would stop being a prefix of a sentence
     */
    public boolean advance(byte[] bytes) {
        return advance(bytes, 0, bytes.length);
    }

    /** {@link #advance(byte[])} on {@code bytes[from .. to)}. */
    public boolean advance(byte[] bytes, int from, int to) {
        int start = 0;
        int n = len;
        boolean acc = accept;
        int uAcc = utfAcc;
        int uLeft = utfLeft;
        int uMin = utfMin;
        for (int i = from; i < to; i++) {
            int b = bytes[i] & 0xFF;
            int cp = -1;
            if (uLeft == 0) {
                if (b < 0x80) {
                    cp = b;
                } else if (b >= 0xC2 && b <= 0xDF) {
                    uAcc = b & 0x1F;
                    uLeft = 1;
                    uMin = 0x80;
                } else if ((b & 0xF0) == 0xE0) {
                    uAcc = b & 0x0F;
                    uLeft = 2;
                    uMin = 0x800;
                } else if (b >= 0xF0 && b <= 0xF4) {
                    uAcc = b & 0x07;
                    uLeft = 3;
                    uMin = 0x10000;
                } else {
                    undoLen = 0;
                    return false;
                }
            } else {
                if ((b & 0xC0) != 0x80) {
                    undoLen = 0;
                    return false;
                }
                uAcc = uAcc << 6 | (b & 0x3F);
                if (--uLeft == 0) {
                    cp = uAcc;
                    if (cp < uMin || cp > GbnfParser.MAX_CODE_POINT || (cp >= 0xD800 && cp <= 0xDFFF)) {
                        undoLen = 0;
                        return false;
                    }
                }
            }
            if (cp >= 0) {
                step(start, n, cp, start + n);
                if (outLen == 0 && !outAccept) {
                    undoLen = 0;
                    return false;
                }
                if (outStart != len) { // ping-pong just after the current set, which stays intact until the end
                    System.arraycopy(sets, outStart, sets, len, outLen);
                }
                start = len;
                n = outLen;
                acc = outAccept;
            } else if (!feasible(start, n, uAcc, uLeft, uMin)) {
                undoLen = 0;
                return false;
            }
        }
        if (start != 0) {
            System.arraycopy(sets, start, sets, 0, n);
        }
        len = n;
        accept = acc;
        utfAcc = uAcc;
        utfLeft = uLeft;
        utfMin = uMin;
        undoLen = 0; // the nodes made are now part of the state
        return true;
    }

    /**
     * Sets bit {@code t} of {@code mask} for every token of {@code trie} whose bytes keep the text a prefix of a
     * sentence; clears the others. End-of-generation tokens are the caller's ({@link #isAccepting()}).
     *
     * @param mask at least {@code (trie.vocabSize() + 63) / 64} words
     */
    public void fillMask(TokenTrie trie, long[] mask) {
        int words = (trie.vocabSize() + 63) >>> 6;
        if (mask.length < words) {
            throw new IllegalArgumentException("mask of " + mask.length + " words for " + trie.vocabSize() + " tokens");
        }
        Arrays.fill(mask, 0, words, 0L);
        final int[] childStart = trie.childStart;
        final byte[] label = trie.label;
        final int[] tokStart = trie.tokenStart;
        final int[] tokIds = trie.tokenIds;
        int baseUndo = undoLen;
        int baseNodes = nodes;
        int baseEpoch = tableEpoch;
        computeFree(trie);
        boolean fixedStart = freeAscii[0] != 0 || freeAscii[1] != 0 || freeHigh;
        chainLen = 0;
        int chainEnd = fixedStart ? len : computeChain(trie.maxHeight);
        final int[] subHeight = trie.subHeight;
        final long[] subAscii = trie.subAscii;
        final byte[] subFlags = trie.subFlags;
        final int[] subStart = trie.subStart;
        final int[] subEnd = trie.subEnd;
        final int[] subTokens = trie.subTokens;
        final long free0 = freeAscii[0];
        final long free1 = freeAscii[1];
        final byte badFlags = freeHigh ? TokenTrie.SUB_BAD_UTF8 : (byte) (TokenTrie.SUB_BAD_UTF8 | TokenTrie.SUB_HIGH);
        int d = 0;
        lvFix[0] = fixedStart;
        lvChain[0] = chainLen > 0 ? 0 : -1;
        lvStart[0] = 0;
        lvLen[0] = len;
        lvAcc[0] = utfAcc;
        lvLeft[0] = utfLeft;
        lvMin[0] = utfMin;
        lvNodes[0] = nodes;
        lvUndo[0] = undoLen;
        lvEpoch[0] = tableEpoch;
        lvTrie[0] = 0;
        lvChild[0] = childStart[0];
        lvFree[0] = chainEnd; // the chain's sets (and nodes, made before these marks) stay for the whole walk
        lvCached[0] = 0;
        while (d >= 0) {
            int t = lvTrie[d];
            int c = lvChild[d];
            if (c >= childStart[t + 1]) {
                d--;
                continue;
            }
            lvChild[d] = c + 1;
            if (lvFix[d] && (subAscii[2 * c] & ~free0) == 0 && (subAscii[2 * c + 1] & ~free1) == 0
                    && (subFlags[c] & badFlags) == 0) {
                // every byte below leads the starting set back to itself: every token of the subtree is allowed
                for (int k = subStart[c]; k < subEnd[c]; k++) {
                    int id = subTokens[k];
                    mask[id >>> 6] |= 1L << (id & 63);
                }
                continue;
            }
            int ci = lvChain[d];
            if (ci >= 0 && ci + subHeight[c] <= chainLen && (subFlags[c] & (TokenTrie.SUB_HIGH | TokenTrie.SUB_BAD_UTF8)) == 0) {
                // the byte j places below is taken by free_(ci + j), each leading to the chain's next set: the whole
                // subtree is allowed (inside a string of bounded length: every token short enough to fit)
                int at = ((ci * CHAIN) + subHeight[c] - 1) * 2;
                if ((subAscii[2 * c] & ~chainInter[at]) == 0 && (subAscii[2 * c + 1] & ~chainInter[at + 1]) == 0) {
                    for (int k = subStart[c]; k < subEnd[c]; k++) {
                        int id = subTokens[k];
                        mask[id >>> 6] |= 1L << (id & 63);
                    }
                    continue;
                }
            }
            if (rewind(lvNodes[d], lvUndo[d], lvEpoch[d])) { // drop what the previous sibling's subtree made
                lvEpoch[d] = tableEpoch; // the table was rebuilt: this level's mark is the new epoch's start
                lvUndo[d] = undoLen;
            }
            int b = label[c] & 0xFF;
            int start = lvStart[d];
            int n = lvLen[d];
            int uAcc = lvAcc[d];
            int uLeft = lvLeft[d];
            int uMin = lvMin[d];
            int cp = -1;
            boolean ok = true;
            if (uLeft == 0) {
                if (b < 0x80) {
                    cp = b;
                } else if (b >= 0xC2 && b <= 0xDF) {
                    uAcc = b & 0x1F;
                    uLeft = 1;
                    uMin = 0x80;
                } else if ((b & 0xF0) == 0xE0) {
                    uAcc = b & 0x0F;
                    uLeft = 2;
                    uMin = 0x800;
                } else if (b >= 0xF0 && b <= 0xF4) {
                    uAcc = b & 0x07;
                    uLeft = 3;
                    uMin = 0x10000;
                } else {
                    ok = false;
                }
            } else if ((b & 0xC0) != 0x80) {
                ok = false;
            } else {
                uAcc = uAcc << 6 | (b & 0x3F);
                if (--uLeft == 0) {
                    cp = uAcc;
                    ok = cp >= uMin && cp <= GbnfParser.MAX_CODE_POINT && (cp < 0xD800 || cp > 0xDFFF);
                }
            }
            if (!ok) {
                continue;
            }
            boolean more; // can the text go on after this byte?
            if (cp >= 0) {
                // the step's result depends only on which stacks of the set match cp: siblings that match the same
                // ones (all the letters inside a string, say) share one step, kept in this level's cache
                long sig = 0;
                boolean memo = n <= 64;
                if (memo) {
                    for (int i = 0; i < n; i++) {
                        if (g.classMatches(code[nodePos[sets[start + i]]], cp)) {
                            sig |= 1L << i;
                        }
                    }
                    if (sig == 0) {
                        continue;
                    }
                }
                int hit = -1;
                int base = d * CACHE;
                if (memo) {
                    for (int j = 0; j < lvCached[d]; j++) {
                        if (cacheSig[base + j] == sig) {
                            hit = j;
                            break;
                        }
                    }
                }
                if (hit < 0) {
                    step(start, n, cp, lvFree[d]);
                    if (memo && lvCached[d] < CACHE) { // keep it: its nodes and set now belong to the level
                        hit = lvCached[d]++;
                        cacheSig[base + hit] = sig;
                        cacheStart[base + hit] = outStart;
                        cacheLen[base + hit] = outLen;
                        cacheAccept[base + hit] = outAccept;
                        lvFree[d] = outStart + outLen;
                        lvNodes[d] = nodes;
                        lvUndo[d] = undoLen;
                        lvEpoch[d] = tableEpoch;
                    }
                    if (outLen == 0 && !outAccept) {
                        continue;
                    }
                    start = outStart;
                    n = outLen;
                } else {
                    if (cacheLen[base + hit] == 0 && !cacheAccept[base + hit]) {
                        continue;
                    }
                    start = cacheStart[base + hit];
                    n = cacheLen[base + hit];
                }
                more = n > 0;
            } else {
                if (!feasible(start, n, uAcc, uLeft, uMin)) {
                    continue;
                }
                more = true;
            }
            for (int k = tokStart[c]; k < tokStart[c + 1]; k++) {
                int id = tokIds[k];
                mask[id >>> 6] |= 1L << (id & 63);
            }
            if (more && childStart[c] < childStart[c + 1]) {
                d++;
                if (d == lvStart.length) {
                    growLevels();
                }
                lvStart[d] = start;
                lvLen[d] = n;
                lvAcc[d] = uAcc;
                lvLeft[d] = uLeft;
                lvMin[d] = uMin;
                lvNodes[d] = nodes;
                lvUndo[d] = undoLen;
                lvEpoch[d] = tableEpoch;
                lvTrie[d] = c;
                lvChild[d] = childStart[c];
                lvFree[d] = Math.max(lvFree[d - 1], start + n);
                lvCached[d] = 0;
                lvFix[d] = lvFix[0] && uLeft == 0 && n == len && sameAsStart(start, n);
                int pc = lvChain[d - 1];
                lvChain[d] = pc >= 0 && pc + 1 < chainLen && b < 0x80 && (chainFree[2 * pc + (b >>> 6)] >>> (b & 63) & 1L) != 0
                        ? pc + 1 : -1;
            }
        }
        rewind(baseNodes, baseUndo, baseEpoch);
    }

    /**
     * Which bytes lead the current set back to itself (inside a JSON string: every character but the quote, the
     * backslash and controls), so that {@link #fillMask} can take whole subtrees made of them at once. A step's result
     * depends only on which stacks match, so one step per distinct match pattern decides. Leaves no nodes behind.
     */
    private void computeFree(TokenTrie trie) {
        freeAscii[0] = 0;
        freeAscii[1] = 0;
        freeHigh = false;
        if (len == 0 || len > 64 || utfLeft != 0) {
            return;
        }
        int nodeMark = nodes;
        int undoMark = undoLen;
        int epoch = tableEpoch;
        long seenSig0 = 0;
        boolean seenSig0Free = false;
        long lastSig = -1;
        boolean lastFree = false;
        for (int b = 0; b < 128; b++) {
            long sig = signature(b);
            boolean isFree;
            if (sig == 0) {
                isFree = false;
            } else if (sig == lastSig) {
                isFree = lastFree;
            } else {
                step(0, len, b, len);
                isFree = outLen == len && sameAsStart(outStart, outLen);
                lastSig = sig;
                lastFree = isFree;
            }
            if (isFree) {
                freeAscii[b >>> 6] |= 1L << (b & 63);
            }
        }
        // characters >= U+0080: free if every stack's class takes all of them or none, and the step loops back
        boolean uniform = true;
        for (int i = 0; i < len && uniform; i++) {
            int cls = code[nodePos[sets[i]]];
            boolean all = g.classMatches(cls, 0x80) && g.classContainsAll(cls, 0x80, GbnfParser.MAX_CODE_POINT);
            boolean none = !g.classIntersects(cls, 0x80, GbnfParser.MAX_CODE_POINT);
            uniform = all || none;
        }
        if (uniform && signature(0x80) != 0) {
            step(0, len, 0x80, len);
            freeHigh = outLen == len && sameAsStart(outStart, outLen);
        }
        rewind(nodeMark, undoMark, epoch);
    }

    /**
     * For a set that is not its own successor (inside a string with {@code maxLength}: each character moves the count
     * on), chains the sets that plain characters lead to: S_0 is the current set, free_i the largest class of ASCII bytes
     * that all match the same stacks of S_i (so all step it to one S_(i+1), not empty), for as many steps as the longest
     * token has bytes. {@link #fillMask} then takes a whole trie subtree at once where each of its bytes lies in the
     * free set of its depth. The chain's sets go to {@code sets} after the current set and its nodes stay until the mask
     * is done.
     *
     * @return where the chain's sets end in {@code sets}
     */
    private int computeChain(int maxHeight) {
        chainLen = 0;
        if (len == 0 || len > 64 || utfLeft != 0) {
            return len;
        }
        int start = 0;
        int n = len;
        int free = len;
        int limit = Math.min(CHAIN, maxHeight);
        final long[] ascii = g.ascii;
        for (int i = 0; i < limit; i++) {
            long any0 = 0;
            long any1 = 0;
            for (int k = 0; k < n; k++) {
                int cls = code[nodePos[sets[start + k]]];
                any0 |= ascii[2 * cls];
                any1 |= ascii[2 * cls + 1];
            }
            // the classes of bytes by which stacks they match: take the largest
            long best0 = 0;
            long best1 = 0;
            int bestCount = 0;
            int rep = -1;
            while ((any0 | any1) != 0) {
                int r = any0 != 0 ? Long.numberOfTrailingZeros(any0) : 64 + Long.numberOfTrailingZeros(any1);
                long a0 = -1L;
                long a1 = -1L;
                for (int k = 0; k < n; k++) {
                    int cls = code[nodePos[sets[start + k]]];
                    long m0 = ascii[2 * cls];
                    long m1 = ascii[2 * cls + 1];
                    boolean has = ((r < 64 ? m0 >>> r : m1 >>> (r - 64)) & 1L) != 0;
                    a0 &= has ? m0 : ~m0;
                    a1 &= has ? m1 : ~m1;
                }
                any0 &= ~a0;
                any1 &= ~a1;
                int count = Long.bitCount(a0) + Long.bitCount(a1);
                if (count > bestCount) {
                    bestCount = count;
                    best0 = a0;
                    best1 = a1;
                    rep = r;
                }
            }
            if (bestCount < CHAIN_MIN_CLASS) {
                break;
            }
            step(start, n, rep, free);
            if (outLen == 0 || outLen > 64) {
                break;
            }
            chainFree[2 * i] = best0;
            chainFree[2 * i + 1] = best1;
            start = outStart;
            n = outLen;
            free = outStart + outLen;
            chainLen = i + 1;
        }
        for (int i = 0; i < chainLen; i++) {
            long w0 = -1L;
            long w1 = -1L;
            for (int h = 1; i + h <= chainLen; h++) {
                w0 &= chainFree[2 * (i + h - 1)];
                w1 &= chainFree[2 * (i + h - 1) + 1];
                chainInter[(i * CHAIN + h - 1) * 2] = w0;
                chainInter[(i * CHAIN + h - 1) * 2 + 1] = w1;
            }
        }
        return free;
    }

    private long signature(int cp) {
        long sig = 0;
        for (int i = 0; i < len; i++) {
            if (g.classMatches(code[nodePos[sets[i]]], cp)) {
                sig |= 1L << i;
            }
        }
        return sig;
    }

    /** True if {@code sets[start .. start+n)} holds the same stacks as the current set (nodes are hash-consed). */
    private boolean sameAsStart(int start, int n) {
        if (n != len) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            int x = sets[start + i];
            boolean found = false;
            for (int j = 0; j < len; j++) {
                if (sets[j] == x) {
                    found = true;
                    break;
                }
            }
            if (!found) {
                return false;
            }
        }
        return true;
    }

    /** Advances the set at {@code sets[start .. start+n)} by one code point; the result goes to {@code out..}. */
    private void step(int start, int n, int cp, int out) {
        outStart = out;
        outLen = 0;
        outAccept = false;
        if (++stamp == 0) {
            Arrays.fill(seen, 0);
            stamp = 1;
        }
        for (int i = 0; i < n; i++) {
            int node = sets[start + i];
            int pos = nodePos[node];
            if (g.classMatches(code[pos], cp)) {
                expand(pos + 1, nodeParent[node]);
            }
        }
    }

    /** Can some stack of the set match a code point that the partial UTF-8 sequence may still become? */
    private boolean feasible(int start, int n, int acc, int left, int min) {
        int shift = 6 * left;
        int lo = Math.max(acc << shift, min);
        int hi = Math.min((acc << shift) | ((1 << shift) - 1), GbnfParser.MAX_CODE_POINT);
        if (lo > hi) {
            return false;
        }
        for (int i = 0; i < n; i++) {
            if (g.classIntersects(code[nodePos[sets[start + i]]], lo, hi)) {
                return true;
            }
        }
        return false;
    }

    private void callRule(int rule, int ret) {
        int a1 = g.ruleAlt[rule + 1];
        for (int a = g.ruleAlt[rule]; a < a1; a++) {
            expand(g.altStart[a], ret);
        }
    }

    /** Continues the stack at element {@code pos} (returning to {@code parent}) up to its next character classes. */
    private void expand(int pos, int parent) {
        while (true) {
            int e = code[pos];
            if (e == Grammar.END) {
                if (parent < 0) {
                    outAccept = true;
                    return;
                }
                pos = nodePos[parent];
                parent = nodeParent[parent];
            } else if (e >= 0) {
                int node = intern(pos, parent);
                if (seen[node] != stamp) {
                    seen[node] = stamp;
                    int at = outStart + outLen;
                    if (at == sets.length) {
                        sets = Arrays.copyOf(sets, sets.length * 2);
                    }
                    sets[at] = node;
                    outLen++;
                }
                return;
            } else {
                int rule = -e - 2;
                int ret = code[pos + 1] == Grammar.END ? parent : intern(pos + 1, parent);
                int a0 = g.ruleAlt[rule];
                int a1 = g.ruleAlt[rule + 1] - 1;
                for (int a = a0; a < a1; a++) {
                    expand(g.altStart[a], ret);
                }
                pos = g.altStart[a1];
                parent = ret;
            }
        }
    }

    private int intern(int pos, int parent) {
        int mask = table.length - 1;
        int h = mix(pos, parent) & mask;
        while (true) {
            int v = table[h];
            if (v == 0) {
                break;
            }
            int id = v - 1;
            if (nodePos[id] == pos && nodeParent[id] == parent) {
                return id;
            }
            h = (h + 1) & mask;
        }
        if (nodes == nodePos.length) {
            int cap = nodes * 2;
            nodePos = Arrays.copyOf(nodePos, cap);
            nodeParent = Arrays.copyOf(nodeParent, cap);
            seen = Arrays.copyOf(seen, cap);
        }
        int id = nodes++;
        nodePos[id] = pos;
        nodeParent[id] = parent;
        seen[id] = 0;
        if (2 * nodes > table.length) {
            rehash(nodes, table.length * 2);
        } else {
            table[h] = id + 1;
            if (undoLen == undo.length) {
                undo = Arrays.copyOf(undo, undoLen * 2);
            }
            undo[undoLen++] = h;
        }
        return id;
    }

    private static int mix(int pos, int parent) {
        int h = pos * 0x9E3779B1 + parent * 0x85EBCA77;
        return h ^ (h >>> 15);
    }

    /** Rebuilds the intern table over nodes [0, count); a new epoch, since logged slots no longer mean anything. */
    private void rehash(int count, int capacity) {
        table = new int[capacity];
        int mask = capacity - 1;
        for (int id = 0; id < count; id++) {
            int h = mix(nodePos[id], nodeParent[id]) & mask;
            while (table[h] != 0) {
                h = (h + 1) & mask;
            }
            table[h] = id + 1;
        }
        undoLen = 0;
        tableEpoch++;
    }

    /** Forgets the nodes made since a mark; true if that took rebuilding the table (the intern table grew since). */
    private boolean rewind(int nodeMark, int undoMark, int epoch) {
        if (nodes == nodeMark && epoch == tableEpoch) {
            while (undoLen > undoMark) {
                table[undo[--undoLen]] = 0;
            }
            return false;
        }
        if (epoch == tableEpoch) {
            while (undoLen > undoMark) {
                table[undo[--undoLen]] = 0;
            }
            nodes = nodeMark;
            return false;
        }
        nodes = nodeMark;
        rehash(nodeMark, table.length);
        return true;
    }

    private void growLevels() {
        int cap = lvStart.length * 2;
        lvStart = Arrays.copyOf(lvStart, cap);
        lvLen = Arrays.copyOf(lvLen, cap);
        lvAcc = Arrays.copyOf(lvAcc, cap);
        lvLeft = Arrays.copyOf(lvLeft, cap);
        lvMin = Arrays.copyOf(lvMin, cap);
        lvNodes = Arrays.copyOf(lvNodes, cap);
        lvUndo = Arrays.copyOf(lvUndo, cap);
        lvEpoch = Arrays.copyOf(lvEpoch, cap);
        lvTrie = Arrays.copyOf(lvTrie, cap);
        lvChild = Arrays.copyOf(lvChild, cap);
        lvChain = Arrays.copyOf(lvChain, cap);
        lvFree = Arrays.copyOf(lvFree, cap);
        lvCached = Arrays.copyOf(lvCached, cap);
        lvFix = Arrays.copyOf(lvFix, cap);
        cacheSig = Arrays.copyOf(cacheSig, cap * CACHE);
        cacheStart = Arrays.copyOf(cacheStart, cap * CACHE);
        cacheLen = Arrays.copyOf(cacheLen, cap * CACHE);
        cacheAccept = Arrays.copyOf(cacheAccept, cap * CACHE);
    }
}
