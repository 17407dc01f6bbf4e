package ml.juno.coordinator.scheduler;

/** What the engine answers to a {@link StepPlan}: logits for the requested rows, or a failure. */
public sealed interface StepResult {

    /**
     * @param values    {@code [rows][vocabSize]} row-major: row k is the k-th plan row with {@code needsLogits};
     *                  the engine may reuse this array for the next step once {@code update} has returned
     * @param vocabSize logits per row
     * @param rows      number of rows
     */
    record Logits(float[] values, int vocabSize, int rows) implements StepResult {
        public Logits {
            if (vocabSize <= 0 || rows < 0 || (long) vocabSize * rows > values.length) {
                throw new IllegalArgumentException("logits of " + values.length + " floats cannot hold "
                        + rows + " rows of " + vocabSize);
            }
        }
    }

    /** The step failed; every sequence in it finishes with {@code error}. */
    record Failure(String message) implements StepResult {
    }

    /** The answer to an empty plan. */
    static StepResult empty(int vocabSize) {
        return new Logits(new float[0], vocabSize, 0);
    }
}
