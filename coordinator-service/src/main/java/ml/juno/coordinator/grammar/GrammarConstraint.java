package ml.juno.coordinator.grammar;

/**
 * A grammar bound to a vocabulary: what a request's sampling carries to constrain decoding. Each sequence gets its
 * own {@link GrammarMatcher} ({@link #newMatcher()}); the grammar and the trie are shared.
 *
 * @param grammar   what the generated text must be a sentence of
 * @param trie      the vocabulary's byte strings ({@link TokenTrie#cached})
 * @param endTokens end-of-generation tokens, allowed only where the grammar accepts
 */
public record GrammarConstraint(Grammar grammar, TokenTrie trie, int[] endTokens) {
    public GrammarConstraint {
        if (grammar == null || trie == null || endTokens == null) {
            throw new IllegalArgumentException("grammar, trie and end tokens are required");
        }
        endTokens = endTokens.clone();
        for (int id : endTokens) {
            if (id < 0 || id >= trie.vocabSize()) {
                throw new IllegalArgumentException("end token " + id + " outside the vocabulary of " + trie.vocabSize());
            }
        }
    }

    public int vocabSize() {
        return trie.vocabSize();
    }

    public GrammarMatcher newMatcher() {
        return grammar.newMatcher();
    }

    /**
     * The tokens allowed after the text {@code m} has seen: bit {@code t} of {@code mask} set for each. End tokens
     * are allowed when the text is a complete sentence.
     */
    public void fillMask(GrammarMatcher m, long[] mask) {
        m.fillMask(trie, mask);
        if (m.isAccepting()) {
            for (int id : endTokens) {
                mask[id >>> 6] |= 1L << (id & 63);
            }
        }
    }

    /** Feeds token {@code id} to {@code m}; false (and {@code m} unchanged) if the grammar does not allow it here. */
    public boolean accept(GrammarMatcher m, int id) {
        return trie.accept(m, id);
    }

    @Override
    public int[] endTokens() {
        return endTokens.clone();
    }
}
