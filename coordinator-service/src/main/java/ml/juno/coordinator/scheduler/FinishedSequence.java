package ml.juno.coordinator.scheduler;

import ml.juno.coordinator.sampling.FinishReason;

/**
 * A sequence that ended; its blocks are already released.
 *
 * @param message empty unless {@code reason} is {@code ERROR}
 */
public record FinishedSequence(long sequenceId, FinishReason reason, Usage usage, String message) {
}
