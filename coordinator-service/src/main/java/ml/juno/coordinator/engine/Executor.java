package ml.juno.coordinator.engine;

import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;

/**
 * Runs one forward step: the seam between scheduling and computing.
 *
 * <p>For every row of the plan, the executor writes the K/V of the row's tokens at the row's positions
 * into the KV slots its block table gives them (position p: block {@code table[p / blockSize]}, offset
 * {@code p % blockSize}; the memory behind the block ids belongs to the executor), attends over the sequence's earlier positions through its block table, and
 * for each row with {@code needsLogits} samples the next token from the logits of the row's last token with
 * the row's {@link ml.juno.coordinator.sampling.SamplerState} (a {@link SamplingStage} next to the logits),
 * returning the tokens in row order ({@link StepResult.Tokens}): the loop moves tokens, never logits.
 * Blocks listed in a block table but not written by the row (prefix-cache hits) already hold that
 * sequence's K/V from an earlier step.
 *
 * <p>Called from the generation loop's single thread, one step at a time (or, with {@link #stepsInFlight()} above 1,
 * several begun and finished in order). A failure is returned as
 * {@link StepResult.Failure} (a thrown runtime exception is treated the same way); every sequence in the
 * step then finishes with {@code error}. Implementations: the in-process CPU engine, the pipeline and
 * tensor-parallel clusters.
 */
public interface Executor {
    StepResult execute(StepPlan plan);

    /**
     * Steps this executor works on at once: 1 (the default: the loop calls {@link #execute}, one step at a time), or
     * more for a pipeline of that many stages, whose first stage can start a step while the later ones still compute
     * earlier steps. With more than 1 the loop keeps up to that many steps of disjoint sequences in flight through
     * {@link #begin} and {@link #finish}.
     */
    default int stepsInFlight() {
        return 1;
    }

    /**
     * Sends {@code plan} on its way without waiting for its result (only when {@link #stepsInFlight()} is above 1); its
     * result comes from {@link #finish}. A failure to send is reported by {@code finish} too, never thrown here.
     */
    default void begin(StepPlan plan) {
        throw new UnsupportedOperationException("this executor runs one step at a time");
    }

    /**
     * Waits for the result of {@code plan}, the oldest step {@link #begin begun} and not finished yet: steps finish in
     * the order they were begun. Failures as {@link #execute}'s.
     */
    default StepResult finish(StepPlan plan) {
        throw new UnsupportedOperationException("this executor runs one step at a time");
    }

    /**
     * Changes whenever KV memory that earlier steps wrote may have been lost (a node restarted and reloaded its shard);
     * the loop then forgets its cached prefixes before the next step. Constant for an in-process executor.
     */
    default long kvEpoch() {
        return 0;
    }
}
