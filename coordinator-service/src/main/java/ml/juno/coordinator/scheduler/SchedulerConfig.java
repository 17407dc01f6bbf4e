package ml.juno.coordinator.scheduler;

import java.time.Duration;

/**
 * Limits of the scheduler.
 *
 * @param maxTokensPerStep  token budget of one forward step (decode rows + prefill chunks)
 * @param maxRunning        sequences in the running batch at most (also the number of slots)
 * @param maxWaiting        queued sequences at most; beyond it submissions are rejected
 * @param maxSequenceLength prompt + generated tokens at most (the context length)
 * @param retryAfter        what a rejected client is told to wait
 */
public record SchedulerConfig(int maxTokensPerStep, int maxRunning, int maxWaiting, int maxSequenceLength,
                              Duration retryAfter) {
    public SchedulerConfig {
        if (maxTokensPerStep < 1 || maxRunning < 1 || maxWaiting < 0 || maxSequenceLength < 2) {
            throw new IllegalArgumentException("bad scheduler limits: tokens/step " + maxTokensPerStep
                    + ", running " + maxRunning + ", waiting " + maxWaiting + ", sequence length " + maxSequenceLength);
        }
        if (maxTokensPerStep < maxRunning) {
            throw new IllegalArgumentException("maxTokensPerStep (" + maxTokensPerStep
                    + ") must cover one decode token per running sequence (" + maxRunning + ")");
        }
        if (retryAfter == null || retryAfter.isNegative()) {
            throw new IllegalArgumentException("retryAfter must be >= 0");
        }
    }
}
