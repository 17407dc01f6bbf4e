package ml.juno.engine.sampling;

/**
 * Everything one row's draw needs, as it travels to the node that has the logits: the sequence's settings, the tokens
 * in its penalty window, the tokens held back this step (min_tokens), its generator's state before the draw, and how
 * many alternatives' log-probabilities it wants. Drawing with it gives exactly what the coordinator's own sampler
 * gives for the same logits and state.
 *
 * @param params      the settings
 * @param window      {@code window[0..windowSize)}: the penalty window's tokens (any order); empty without penalties
 * @param windowSize  tokens in it
 * @param suppressed  tokens that may not be drawn this step
 * @param rng         the xoshiro256** state (four words)
 * @param topLogprobs -1: no log-probabilities; else the chosen token's plus this many alternatives (0..20)
 */
public record RowDraw(DrawParams params, int[] window, int windowSize, int[] suppressed, long[] rng, int topLogprobs) {
    /** OpenAI allows up to 20 alternatives. */
    public static final int MAX_TOP_LOGPROBS = 20;

    public RowDraw {
        if (windowSize < 0 || windowSize > window.length) {
            throw new IllegalArgumentException("penalty window of " + windowSize + " tokens in " + window.length);
        }
        if (rng.length != 4) {
            throw new IllegalArgumentException("a generator state is four words, got " + rng.length);
        }
        if (topLogprobs < -1 || topLogprobs > MAX_TOP_LOGPROBS) {
            throw new IllegalArgumentException("top logprobs must be -1 (off) or in [0, " + MAX_TOP_LOGPROBS + "], got " + topLogprobs);
        }
    }

    /** Why this draw cannot run on a vocabulary of {@code vocab} tokens (a token id outside it), or null. */
    public String vocabularyProblem(int vocab) {
        for (int id : params.biasIds()) {
            if (id >= vocab) {
                return "logit bias names token " + id + " outside the vocabulary of " + vocab;
            }
        }
        for (int i = 0; i < windowSize; i++) {
            if (window[i] < 0 || window[i] >= vocab) {
                return "penalty window holds token " + window[i] + " outside the vocabulary of " + vocab;
            }
        }
        for (int id : suppressed) {
            if (id < 0 || id >= vocab) {
                return "suppressed token " + id + " outside the vocabulary of " + vocab;
            }
        }
        return null;
    }
}
