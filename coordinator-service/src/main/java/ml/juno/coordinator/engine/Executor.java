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
 * <p>Called from the generation loop's single thread, one step at a time. A failure is returned as
 * {@link StepResult.Failure} (a thrown runtime exception is treated the same way); every sequence in the
 * step then finishes with {@code error}. Implementations: the in-process CPU engine, the pipeline and
 * tensor-parallel clusters.
 */
public interface Executor {
    StepResult execute(StepPlan plan);

    /**
     * Changes whenever KV memory that earlier steps wrote may have been lost (a node restarted and reloaded its shard);
     * the loop then forgets its cached prefixes before the next step. Constant for an in-process executor.
     */
    default long kvEpoch() {
        return 0;
    }
}
