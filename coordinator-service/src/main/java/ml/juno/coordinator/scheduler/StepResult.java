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
     * @param hidden   the final hidden states of the plan's embedding rows ({@link Hidden#NONE} when it has none)
     */
    record Tokens(int[] tokenIds, TokenLogprobs[] logprobs, String[] failures, int rows, TokenLogprobs[][] scores, Hidden hidden)
            implements StepResult {

        /** Tokens of a step that scored no prompt tokens and has no embedding rows. */
        public Tokens(int[] tokenIds, TokenLogprobs[] logprobs, String[] failures, int rows) {
            this(tokenIds, logprobs, failures, rows, null, Hidden.NONE);
        }

        /** Tokens of a step without embedding rows. */
        public Tokens(int[] tokenIds, TokenLogprobs[] logprobs, String[] failures, int rows, TokenLogprobs[][] scores) {
            this(tokenIds, logprobs, failures, rows, scores, Hidden.NONE);
        }

        public Tokens {
            if (rows < 0 || rows > tokenIds.length || rows > logprobs.length || rows > failures.length) {
                throw new IllegalArgumentException("token arrays of " + tokenIds.length + ", " + logprobs.length + " and "
                        + failures.length + " entries cannot hold " + rows + " rows");
            }
        }

        /** The same tokens with the step's hidden states. */
        public Tokens withHidden(Hidden h) {
            return new Tokens(tokenIds, logprobs, failures, rows, scores, h);
        }
    }

    /**
     * Final hidden states (after the output norm) of a step's embedding rows: entry k, {@code data[k·dim ..
     * (k+1)·dim)}, is the k-th token with a hidden state wanted, in plan order. The engine may reuse the buffer for the
     * next step once {@code update} has returned.
     *
     * @param data [rows][dim] row-major, possibly longer
     * @param rows entries
     * @param dim  floats per entry
     */
    record Hidden(float[] data, int rows, int dim) {
        public static final Hidden NONE = new Hidden(new float[0], 0, 0);

        public Hidden {
            if (rows < 0 || dim < 0 || (long) rows * dim > data.length) {
                throw new IllegalArgumentException(rows + " hidden rows of " + dim + " in " + data.length + " floats");
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
