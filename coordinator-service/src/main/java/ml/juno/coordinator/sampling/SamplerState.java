package ml.juno.coordinator.sampling;

/**
 * What one sequence carries between draws: its parameters, its own random generator (so its output
 * depends only on its seed and its logits), its recent-token window for penalties and how many
 * alternatives' log-probabilities it wants with each token.
 */
public final class SamplerState {
    private static final int[] NONE = new int[0];

    private final SamplingParams params;
    private final Xoshiro256 rng;
    private final TokenWindow window;
    private final int topLogprobs;
    private int[] suppressed = NONE;

    /** A state that wants no log-probabilities. */
    public SamplerState(SamplingParams params, int vocabSize) {
        this(params, vocabSize, -1);
    }

    /**
     * @param topLogprobs -1: no log-probabilities; otherwise the chosen token's plus this many alternatives (0..20)
     */
    public SamplerState(SamplingParams params, int vocabSize, int topLogprobs) {
        if (vocabSize <= 0) {
            throw new IllegalArgumentException("vocab size must be > 0, got " + vocabSize);
        }
        int maxBias = params.logitBias().maxTokenId();
        if (maxBias >= vocabSize) {
            throw new IllegalArgumentException("logit bias names token " + maxBias
                    + " outside the vocabulary of " + vocabSize);
        }
        if (topLogprobs < -1 || topLogprobs > Sampler.MAX_TOP_LOGPROBS) {
            throw new IllegalArgumentException("top logprobs must be -1 (off) or in [0, " + Sampler.MAX_TOP_LOGPROBS
                    + "], got " + topLogprobs);
        }
        this.params = params;
        this.topLogprobs = topLogprobs;
        this.rng = new Xoshiro256(params.seed());
        this.window = new TokenWindow(params.penalties().window());
    }

    public SamplingParams params() {
        return params;
    }

    /** -1 when no log-probabilities are wanted, else the number of alternatives to report. */
    public int topLogprobs() {
        return topLogprobs;
    }

    Xoshiro256 rng() {
        return rng;
    }

    TokenWindow window() {
        return window;
    }

    /** Records a token of the sequence (prompt or generated) for the penalty window. */
    public void accept(int token) {
        window.add(token);
    }

    /** Records several tokens, e.g. the prompt. */
    public void accept(int[] tokens, int from, int to) {
        for (int i = from; i < to; i++) {
            window.add(tokens[i]);
        }
    }

    /**
     * Tokens that cannot be drawn until this is called again (used to hold back end-of-generation
     * tokens before min-tokens is reached). The array is kept by reference, not copied.
     */
    public void suppress(int[] tokenIds) {
        this.suppressed = tokenIds;
    }

    /** Lifts {@link #suppress(int[])}. */
    public void clearSuppressed() {
        this.suppressed = NONE;
    }

    int[] suppressed() {
        return suppressed;
    }
}
