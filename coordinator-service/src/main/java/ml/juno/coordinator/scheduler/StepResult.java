package ml.juno.coordinator.scheduler;

import ml.juno.coordinator.sampling.TokenLogprobs;

/** What the engine answers to a {@link StepPlan}: the tokens sampled for the requested rows, or a failure. */
public sealed interface StepResult {

    /** Marks a row of {@link Tokens} whose sampling failed. */
    int NO_TOKEN = -1;

    /**
     * The tokens the engine sampled next to the logits. Entry k belongs to the k-th plan row with {@code needsLogits};
     * the engine may reuse these arrays for the next step once {@code update} has returned.
     *
     * @param tokenIds [rows] the sampled token, or {@link #NO_TOKEN} when sampling that row failed
     * @param logprobs [rows] its log-probabilities, {@link SampledToken#NO_LOGPROBS} when the sequence did not ask
     * @param failures [rows] why sampling the row failed, "" when it did not
     * @param rows     number of rows
     * @param scores   [plan rows] the log-probabilities of the prompt tokens a row scored ({@link TokenChunk#scored()}),
     *                 in order; {@code null} when no row of the step scored (the usual case), else null for the rows
     *                 that did not
     */
    record Tokens(int[] tokenIds, TokenLogprobs[] logprobs, String[] failures, int rows, TokenLogprobs[][] scores)
            implements StepResult {

        /** Tokens of a step that scored no prompt tokens. */
        public Tokens(int[] tokenIds, TokenLogprobs[] logprobs, String[] failures, int rows) {
            this(tokenIds, logprobs, failures, rows, null);
        }

        public Tokens {
            if (rows < 0 || rows > tokenIds.length || rows > logprobs.length || rows > failures.length) {
                throw new IllegalArgumentException("token arrays of " + tokenIds.length + ", " + logprobs.length + " and "
                        + failures.length + " entries cannot hold " + rows + " rows");
            }
        }
    }

    /** The step failed; every sequence in it finishes with {@code error}. */
    record Failure(String message) implements StepResult {
    }

    /** The answer to an empty plan. */
    static StepResult empty() {
        return new Tokens(new int[0], new TokenLogprobs[0], new String[0], 0);
    }
}
