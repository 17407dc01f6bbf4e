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
 * @param quantumSteps      fairness quantum in steps (0: off): a request whose group has no running sequence and that
 *                          has waited this many steps may take the slot of a sequence that has run this many steps
 *                          since it was last admitted (see {@link Scheduler})
 */
public record SchedulerConfig(int maxTokensPerStep, int maxRunning, int maxWaiting, int maxSequenceLength,
                              Duration retryAfter, int quantumSteps) {
    /** System property of the default {@link #quantumSteps}. */
    public static final String QUANTUM_PROPERTY = "juno.scheduler.quantum-steps";
    /** The default {@link #quantumSteps} when {@link #QUANTUM_PROPERTY} is unset. */
    public static final int DEFAULT_QUANTUM_STEPS = 256;

    /** With the quantum of {@link #defaultQuantumSteps()}. */
    public SchedulerConfig(int maxTokensPerStep, int maxRunning, int maxWaiting, int maxSequenceLength,
                           Duration retryAfter) {
        this(maxTokensPerStep, maxRunning, maxWaiting, maxSequenceLength, retryAfter, defaultQuantumSteps());
    }

    /** {@link #QUANTUM_PROPERTY} if set, else {@link #DEFAULT_QUANTUM_STEPS}. */
    public static int defaultQuantumSteps() {
        return Integer.getInteger(QUANTUM_PROPERTY, DEFAULT_QUANTUM_STEPS);
    }

    public SchedulerConfig {
        if (quantumSteps < 0) {
            throw new IllegalArgumentException("quantumSteps must be >= 0, got " + quantumSteps);
        }
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
