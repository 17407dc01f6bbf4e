package ml.juno.coordinator.scheduler;

import java.util.Arrays;

/**
 * Consecutive tokens of one sequence fed in one step.
 *
 * @param startPosition position of {@code tokenIds[0]}; token i sits at {@code startPosition + i}
 * @param tokenIds      the tokens (a prefill chunk, or the one last sampled token when decoding)
 * @param needsLogits   whether the engine must return logits for the last token of the chunk
 */
public record TokenChunk(int startPosition, int[] tokenIds, boolean needsLogits) {
    public TokenChunk {
        if (startPosition < 0 || tokenIds.length == 0) {
            throw new IllegalArgumentException("chunk needs a position >= 0 and at least one token");
        }
    }

    public int size() {
        return tokenIds.length;
    }

    public int position(int i) {
        return startPosition + i;
    }

    @Override
    public String toString() {
        return "TokenChunk[pos=" + startPosition + ", tokens=" + Arrays.toString(tokenIds) + ", logits=" + needsLogits + "]";
    }
}
