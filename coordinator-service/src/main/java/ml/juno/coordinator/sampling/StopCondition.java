package ml.juno.coordinator.sampling;

import java.util.List;

/**
 * When a sequence stops. End-of-generation tokens and stop strings are ignored until
 * {@code minTokens} tokens have been generated (the end-of-generation tokens are then masked out of the
 * draw, as vLLM does, so the sequence really continues).
 *
 * @param maxTokens    generated tokens at most; >= 1
 * @param minTokens    generated tokens before any stop is honoured; 0 <= minTokens <= maxTokens
 * @param stopTokenIds end-of-generation token ids (the model's EOG set plus any the request adds)
 * @param stopStrings  stop strings, none empty; the text never shows them
 */
public record StopCondition(int maxTokens, int minTokens, int[] stopTokenIds, List<String> stopStrings) {

    public StopCondition {
        if (maxTokens < 1) {
            throw new IllegalArgumentException("maxTokens must be >= 1, got " + maxTokens);
        }
        if (minTokens < 0 || minTokens > maxTokens) {
            throw new IllegalArgumentException("minTokens must be in [0, maxTokens=" + maxTokens + "], got "
                    + minTokens);
        }
        for (int id : stopTokenIds) {
            if (id < 0) {
                throw new IllegalArgumentException("stop token id must be >= 0, got " + id);
            }
        }
        for (String s : stopStrings) {
            if (s == null || s.isEmpty()) {
                throw new IllegalArgumentException("stop strings must not be empty");
            }
        }
        stopTokenIds = stopTokenIds.clone();
        stopStrings = List.copyOf(stopStrings);
    }

    /** Stop after {@code maxTokens} or at one of {@code stopTokenIds}; no stop strings, no minimum. */
    public static StopCondition of(int maxTokens, int... stopTokenIds) {
        return new StopCondition(maxTokens, 0, stopTokenIds, List.of());
    }

    public boolean isStopToken(int id) {
        for (int s : stopTokenIds) {
            if (s == id) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int[] stopTokenIds() {
        return stopTokenIds.clone();
    }
}
