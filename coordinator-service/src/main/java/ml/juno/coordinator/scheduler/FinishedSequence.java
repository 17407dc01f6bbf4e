package ml.juno.coordinator.scheduler;

import ml.juno.coordinator.sampling.FinishReason;

/**
 * A sequence that ended; its blocks are already released.
 *
 * @param message   empty unless {@code reason} is {@code ERROR}
 * @param embedding an embedding sequence's pooled, normalised vector once it finished with {@code STOP}; else empty
 */
public record FinishedSequence(long sequenceId, FinishReason reason, Usage usage, String message, float[] embedding) {
    private static final float[] NONE = new float[0];

    /** A generated sequence's finish (no embedding). */
    public FinishedSequence(long sequenceId, FinishReason reason, Usage usage, String message) {
        this(sequenceId, reason, usage, message, NONE);
    }
}
