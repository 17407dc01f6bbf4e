package ml.juno.coordinator.sampling;

import ml.juno.engine.sampling.SamplingChain;
import ml.juno.engine.sampling.TokenWindow;

/**
 * The sampler chain, run on one row of logits: (grammar mask) → penalties → logit bias → (suppressed tokens) →
 * temperature → top-k → top-p → min-p → draw; or argmax when the temperature is 0. The chain itself is the engine's
 * {@link SamplingChain} (what a cluster's last node draws with); this class adds the grammar mask, which only the
 * coordinator can compute.
 *
 * <p>One instance per inference thread: it owns the vocabulary-sized scratch buffers, so a draw
 * allocates nothing and never sorts the whole vocabulary. The per-sequence part (generator,
 * penalty window) lives in {@link SamplerState}. The input logits are never modified.
 */
public final class Sampler {
    private final int vocab;
    private final SamplingChain chain;
    private final long[] mask;    // [(vocab + 63) / 64] tokens the grammar allows, of the last constrained draw
    private float[] masked;       // [vocab] raw logits with disallowed tokens at -inf, for constrained logprobs
    private SamplerState maskedFor; // whose draw the mask is

    /** OpenAI allows up to 20 alternatives. */
    public static final int MAX_TOP_LOGPROBS = ml.juno.engine.sampling.RowDraw.MAX_TOP_LOGPROBS;

    public Sampler(int vocabSize) {
        if (vocabSize <= 0) {
            throw new IllegalArgumentException("vocab size must be > 0, got " + vocabSize);
        }
        this.vocab = vocabSize;
        this.chain = new SamplingChain(vocabSize);
        this.mask = new long[(vocabSize + 63) >>> 6];
    }

    public int vocabSize() {
        return vocab;
    }

    /**
     * Picks the next token from {@code logits[offset..offset+vocab)}. Does not record the token in the
     * state's window: call {@link SamplerState#accept(int)} once the token is kept.
     */
    public int sample(float[] logits, int offset, SamplerState state) {
        float[] w = chain.load(logits, offset);
        maskedFor = null;
        ml.juno.coordinator.grammar.GrammarMatcher gm = state.grammar();
        if (gm != null) { // before every other stage: a disallowed token stays at -inf whatever bias or penalty follows
            state.params().grammar().fillMask(gm, mask);
            for (int i = 0; i < vocab; i++) {
                if ((mask[i >>> 6] >>> (i & 63) & 1L) == 0) {
                    w[i] = Float.NEGATIVE_INFINITY;
                }
            }
            maskedFor = state;
        }
        TokenWindow window = state.window();
        chain.adjust(state.draw(), window.tokens(), window.size(), state.suppressed());
        if (gm != null && !anyAllowed(w)) {
            throw new IllegalStateException(state.suppressed().length > 0 && gm.isAccepting()
                    ? "the grammar is complete but min_tokens holds back the end of generation"
                    : "the grammar allows no token of the vocabulary here");
        }
        return chain.choose(state.draw(), state.rng());
    }

    private boolean anyAllowed(float[] w) {
        for (int i = 0; i < vocab; i++) {
            if (w[i] != Float.NEGATIVE_INFINITY) {
                return true;
            }
        }
        return false;
    }

    /**
     * {@link #logprobs(float[], int, int, int)} for the draw just made for {@code state}: when a grammar constrained
     * it, from the log-softmax over the tokens the grammar allowed (the distribution the token was drawn from, before
     * temperature and truncation), with only allowed tokens as alternatives.
     */
    public TokenLogprobs logprobs(float[] logits, int offset, int chosen, int top, SamplerState state) {
        if (state == null || maskedFor != state) {
            return logprobs(logits, offset, chosen, top);
        }
        if (masked == null) {
            masked = new float[vocab];
        }
        int allowed = 0;
        for (int i = 0; i < vocab; i++) {
            boolean ok = (mask[i >>> 6] >>> (i & 63) & 1L) != 0;
            masked[i] = ok ? logits[offset + i] : Float.NEGATIVE_INFINITY;
            allowed += ok ? 1 : 0;
        }
        TokenLogprobs lp = logprobs(masked, 0, chosen, Math.min(top, allowed));
        return lp;
    }

    /**
     * Log-probabilities of {@code chosen} and of the {@code top} best alternatives, from the log-softmax
     * of the unmodified {@code logits[offset..offset+vocab)}.
     */
    public TokenLogprobs logprobs(float[] logits, int offset, int chosen, int top) {
        if (top < 0 || top > MAX_TOP_LOGPROBS) {
            throw new IllegalArgumentException("top logprobs must be in [0, " + MAX_TOP_LOGPROBS + "], got " + top);
        }
        if (chosen < 0 || chosen >= vocab) {
            throw new IllegalArgumentException("token " + chosen + " outside the vocabulary of " + vocab);
        }
        double logZ = chain.logZ(logits, offset);
        int m = chain.top(logits, offset, top);
        int[] topIds = chain.topIds();
        int[] outIds = new int[m];
        float[] outLp = new float[m];
        for (int i = 0; i < m; i++) {
            outIds[i] = topIds[i];
            outLp[i] = (float) (logits[offset + topIds[i]] - logZ);
        }
        return new TokenLogprobs(chosen, (float) (logits[offset + chosen] - logZ), outIds, outLp);
    }
}
