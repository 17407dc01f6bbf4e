package ml.juno.coordinator.sampling;

/**
 * The sampler chain, run on one row of logits: (grammar mask) → penalties → logit bias → (suppressed tokens) →
 * temperature → top-k → top-p → min-p → draw; or argmax when the temperature is 0.
 *
 * <p>One instance per inference thread: it owns the vocabulary-sized scratch buffers, so a draw
 * allocates nothing and never sorts the whole vocabulary. The per-sequence part (generator,
 * penalty window) lives in {@link SamplerState}. The input logits are never modified.
 */
public final class Sampler {
    private final int vocab;
    private final float[] work;   // [vocab] logits after each stage
    private final int[] ids;      // [vocab] candidate token ids
    private final int[] counts;   // [vocab] occurrence counts, all zero between calls
    private final int[] topIds;   // [MAX_TOP_LOGPROBS] scratch for log-probabilities
    private final long[] mask;    // [(vocab + 63) / 64] tokens the grammar allows, of the last constrained draw
    private float[] masked;       // [vocab] raw logits with disallowed tokens at -inf, for constrained logprobs
    private SamplerState maskedFor; // whose draw the mask is

    /** OpenAI allows up to 20 alternatives. */
    public static final int MAX_TOP_LOGPROBS = 20;

    public Sampler(int vocabSize) {
        if (vocabSize <= 0) {
            throw new IllegalArgumentException("vocab size must be > 0, got " + vocabSize);
        }
        this.vocab = vocabSize;
        this.work = new float[vocabSize];
        this.ids = new int[vocabSize];
        this.counts = new int[vocabSize];
        this.topIds = new int[MAX_TOP_LOGPROBS];
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
        if (offset < 0 || offset + vocab > logits.length) {
            throw new IllegalArgumentException("logits row [" + offset + ", " + (offset + vocab)
                    + ") outside an array of " + logits.length);
        }
        float[] w = work;
        for (int i = 0; i < vocab; i++) {
            float v = logits[offset + i];
            if (v != v) {
                throw new IllegalArgumentException("logit of token " + i + " is NaN");
            }
            w[i] = v;
        }
        SamplingParams p = state.params();
        maskedFor = null;
        ml.juno.coordinator.grammar.GrammarMatcher gm = state.grammar();
        if (gm != null) { // before every other stage: a disallowed token stays at -inf whatever bias or penalty follows
            p.grammar().fillMask(gm, mask);
            for (int i = 0; i < vocab; i++) {
                if ((mask[i >>> 6] >>> (i & 63) & 1L) == 0) {
                    w[i] = Float.NEGATIVE_INFINITY;
                }
            }
            maskedFor = state;
        }
        if (p.penalties().active()) {
            Penalties.apply(w, state.window(), p.penalties(), counts);
        }
        p.logitBias().addTo(w);
        for (int id : state.suppressed()) {
            w[id] = Float.NEGATIVE_INFINITY;
        }
        if (gm != null && !anyAllowed(w)) {
            throw new IllegalStateException(state.suppressed().length > 0 && gm.isAccepting()
                    ? "the grammar is complete but min_tokens holds back the end of generation"
                    : "the grammar allows no token of the vocabulary here");
        }
        if (p.isGreedy()) {
            return Greedy.argmax(w, 0, vocab);
        }
        Temperature.apply(w, vocab, p.temperature());
        Truncation t = p.truncation();
        int count;
        if (t.topK() > 0 && t.topK() < vocab) {
            count = TopK.select(w, 0, vocab, t.topK(), ids);
        } else {
            for (int i = 0; i < vocab; i++) {
                ids[i] = i;
            }
            count = vocab;
        }
        if (t.topP() < 1f) {
            count = TopP.truncate(w, ids, count, t.topP(), t.minP());
        } else {
            count = MinP.filter(w, ids, count, t.minP());
        }
        return Draw.pick(w, ids, count, state.rng().nextDouble());
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
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            max = Math.max(max, logits[offset + i]);
        }
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            sum += Math.exp(logits[offset + i] - max);
        }
        double logZ = max + Math.log(sum);
        int m = top == 0 ? 0 : TopK.select(logits, offset, vocab, top, topIds);
        int[] outIds = new int[m];
        float[] outLp = new float[m];
        for (int i = 0; i < m; i++) {
            outIds[i] = topIds[i];
            outLp[i] = (float) (logits[offset + topIds[i]] - logZ);
        }
        return new TokenLogprobs(chosen, (float) (logits[offset + chosen] - logZ), outIds, outLp);
    }
}
