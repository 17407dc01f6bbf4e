package ml.juno.coordinator.tokenizer;

import java.util.Arrays;

/**
 * Cuts special-token text out of the input before the tokenizer proper runs (llama.cpp's
 * {@code tokenizer_st_partition}): special tokens are taken longest first; each one splits every
 * remaining text fragment at its leftmost non-overlapping occurrences, honouring the token's
 * left/right whitespace-strip flags. Control and unknown tokens take part only when special text is
 * parsed; user-defined tokens always do.
 *
 * <p>All occurrences of all special tokens are found first in one pass over the text with a byte trie,
 * so a long text costs one scan no matter how many special tokens the vocabulary has.
 */
final class SpecialTokenSplitter {
    private final int[] order;        // special token ids, longest first
    private final byte[][] texts;     // [k] → UTF-8 of order[k]
    private final int[] attrs;        // [k] → attributes of order[k]
    // trie over the special texts: children as first-child / next-sibling lists
    private int[] firstChild = new int[64];
    private int[] sibling = new int[64];
    private byte[] label = new byte[64];
    private int[] terminal = new int[64]; // index k into order, or -1
    private int nodes = 1;

    SpecialTokenSplitter(int[] specialIds, TokenLookup lookup, int[] tokenAttrs) {
        order = specialIds.clone();
        texts = new byte[order.length][];
        attrs = new int[order.length];
        Arrays.fill(firstChild, -1);
        Arrays.fill(sibling, -1);
        Arrays.fill(terminal, -1);
        for (int k = 0; k < order.length; k++) {
            texts[k] = lookup.bytes(order[k]);
            attrs[k] = tokenAttrs[order[k]];
            insert(texts[k], k);
        }
    }

    private void insert(byte[] t, int k) {
        int node = 0;
        for (byte b : t) {
            int child = firstChild[node];
            while (child >= 0 && label[child] != b) {
                child = sibling[child];
            }
            if (child < 0) {
                child = newNode(b);
                sibling[child] = firstChild[node];
                firstChild[node] = child;
            }
            node = child;
        }
        terminal[node] = k;
    }

    private int newNode(byte b) {
        if (nodes == label.length) {
            int c = nodes * 2;
            firstChild = Arrays.copyOf(firstChild, c);
            sibling = Arrays.copyOf(sibling, c);
            label = Arrays.copyOf(label, c);
            terminal = Arrays.copyOf(terminal, c);
            Arrays.fill(firstChild, nodes, c, -1);
            Arrays.fill(sibling, nodes, c, -1);
            Arrays.fill(terminal, nodes, c, -1);
        }
        label[nodes] = b;
        return nodes++;
    }

    /**
     * Splits {@code text} into fragments, returned as triples {@code (tokenId, start, end)}: tokenId
     * ≥ 0 for a special token, -1 for raw text {@code text[start, end)}.
     */
    IntList split(byte[] text, boolean parseSpecial) {
        IntList frags = new IntList(16);
        if (text.length == 0) {
            return frags;
        }
        frags.add(-1);
        frags.add(0);
        frags.add(text.length);
        if (order.length == 0) {
            return frags;
        }
        IntList[] hits = occurrences(text, parseSpecial);
        for (int k = 0; k < order.length; k++) {
            if (hits[k] == null) {
                continue;
            }
            frags = splitOne(text, frags, k, hits[k]);
        }
        return frags;
    }

    /** Start offsets of every occurrence (overlaps included) of each eligible special token. */
    private IntList[] occurrences(byte[] text, boolean parseSpecial) {
        IntList[] hits = new IntList[order.length];
        for (int i = 0; i < text.length; i++) {
            int node = 0;
            for (int j = i; j < text.length; j++) {
                int child = firstChild[node];
                byte b = text[j];
                while (child >= 0 && label[child] != b) {
                    child = sibling[child];
                }
                if (child < 0) {
                    break;
                }
                node = child;
                int k = terminal[node];
                if (k >= 0 && (parseSpecial || (attrs[k] & (TokenAttributes.CONTROL | TokenAttributes.UNKNOWN)) == 0)) {
                    if (hits[k] == null) {
                        hits[k] = new IntList(4);
                    }
                    hits[k].add(i);
                }
            }
        }
        return hits;
    }

    private IntList splitOne(byte[] text, IntList frags, int k, IntList starts) {
        IntList out = new IntList(frags.size() + 6);
        int tlen = texts[k].length;
        int id = order[k];
        boolean lstrip = (attrs[k] & TokenAttributes.LSTRIP) != 0;
        boolean rstrip = (attrs[k] & TokenAttributes.RSTRIP) != 0;
        int cursor = 0; // into starts, ascending
        for (int f = 0; f < frags.size(); f += 3) {
            int tok = frags.get(f);
            int pos = frags.get(f + 1);
            int end = frags.get(f + 2);
            if (tok >= 0) {
                out.add(tok);
                out.add(pos);
                out.add(end);
                continue;
            }
            while (true) {
                while (cursor < starts.size() && starts.get(cursor) < pos) {
                    cursor++;
                }
                int m = cursor < starts.size() ? starts.get(cursor) : -1;
                if (m < 0 || m + tlen > end) {
                    addRaw(out, pos, end);
                    break;
                }
                int leftEnd = m;
                if (lstrip) {
                    while (leftEnd > pos && isSpace(text[leftEnd - 1])) {
                        leftEnd--;
                    }
                }
                addRaw(out, pos, leftEnd);
                out.add(id);
                out.add(m);
                out.add(m + tlen);
                pos = m + tlen;
                if (rstrip) {
                    while (pos < end && isSpace(text[pos])) {
                        pos++;
                    }
                }
            }
        }
        return out;
    }

    private static void addRaw(IntList out, int start, int end) {
        if (end > start) {
            out.add(-1);
            out.add(start);
            out.add(end);
        }
    }

    /** C {@code isspace} in the "C" locale. */
    private static boolean isSpace(byte b) {
        return b == ' ' || (b >= 0x09 && b <= 0x0D);
    }
}
