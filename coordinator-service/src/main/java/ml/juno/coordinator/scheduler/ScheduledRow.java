package ml.juno.coordinator.scheduler;

import ml.juno.coordinator.sampling.SamplerState;

/**
 * One sequence's part of a step.
 *
 * @param sequenceId the sequence
 * @param slot       the sequence's batch slot in [0, maxRunning), stable while it runs (for engines that keep
 *                   per-sequence state in fixed slots)
 * @param chunk      tokens and positions to compute, and whether logits are wanted
 * @param kv         block table, covering the chunk's positions
 * @param sampler    the sequence's sampling state, for the engine to draw the next token with when the row
 *                   needs logits (its generator and suppressed tokens are set for this step)
 */
public record ScheduledRow(long sequenceId, int slot, TokenChunk chunk, KvPlacement kv, SamplerState sampler, int adapter) {

    /** A row without a named LoRA adapter. */
    public ScheduledRow(long sequenceId, int slot, TokenChunk chunk, KvPlacement kv, SamplerState sampler) {
        this(sequenceId, slot, chunk, kv, sampler, 0);
    }

    public ScheduledRow {
        if (sampler == null) {
            throw new IllegalArgumentException("a row needs its sequence's sampler state");
        }
        if ((long) kv.blockTable().length * kv.blockSize() < (long) chunk.startPosition() + chunk.size()) {
            throw new IllegalArgumentException("block table of " + kv.blockTable().length + " blocks of " + kv.blockSize()
                    + " does not cover positions up to " + (chunk.startPosition() + chunk.size()));
        }
    }

    public boolean needsLogits() {
        return chunk.needsLogits();
    }

    public int tokenCount() {
        return chunk.size();
    }
}
