package ml.juno.coordinator.scheduler;

import java.util.Arrays;

/**
 * Consecutive tokens of one sequence fed in one step.
 *
 * @param startPosition position of {@code tokenIds[0]}; token i sits at {@code startPosition + i}
 * @param tokenIds      the tokens (a prefill chunk, or the one last sampled token when decoding)
 * @param needsLogits   whether the engine must return logits for the last token of the chunk
 * @param hiddenFrom    the tokens {@code [hiddenFrom, hiddenTo)} of the chunk whose final hidden states the engine must
 *                      return (an embedding's rows; empty, {@code 0, 0}, for generation)
 */
public record TokenChunk(int startPosition, int[] tokenIds, boolean needsLogits, int hiddenFrom, int hiddenTo) {
    /** A chunk that wants no hidden states. */
    public TokenChunk(int startPosition, int[] tokenIds, boolean needsLogits) {
        this(startPosition, tokenIds, needsLogits, 0, 0);
    }

    public TokenChunk {
        if (hiddenFrom < 0 || hiddenTo < hiddenFrom || hiddenTo > tokenIds.length) {
            throw new IllegalArgumentException("hidden rows [" + hiddenFrom + ", " + hiddenTo + ") outside a chunk of "
                    + tokenIds.length + " tokens");
        }
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

    /** Tokens whose final hidden states are wanted. */
    public int hiddenCount() {
        return hiddenTo - hiddenFrom;
    }

    /** Whether token {@code i} of the chunk wants its final hidden state. */
    public boolean needsHidden(int i) {
        return i >= hiddenFrom && i < hiddenTo;
    }

    @Override
    public String toString() {
        return "TokenChunk[pos=" + startPosition + ", tokens=" + Arrays.toString(tokenIds) + ", logits=" + needsLogits + "]";
    }
}
