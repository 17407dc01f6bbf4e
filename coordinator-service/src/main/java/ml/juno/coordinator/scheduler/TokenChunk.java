package ml.juno.coordinator.scheduler;

import java.util.Arrays;

/**
 * Consecutive tokens of one sequence fed in one step.
 *
 * @param startPosition position of {@code tokenIds[0]}; token i sits at {@code startPosition + i}
 * @param tokenIds      the tokens (a prefill chunk, or the one last sampled token when decoding)
 * @param needsLogits   whether the engine must return logits for the last token of the chunk (to sample from)
 * @param scored        prompt scoring (echo with logprobs): the logits of token {@code i < scored.length} are returned
 *                      too and score {@code scored[i]}, the prompt token that follows it; empty for every other chunk
 * @param hiddenFrom    the tokens {@code [hiddenFrom, hiddenTo)} of the chunk whose final hidden states the engine must
 *                      return (an embedding's rows; empty, {@code 0, 0}, for generation)
 */
public record TokenChunk(int startPosition, int[] tokenIds, boolean needsLogits, int[] scored, int hiddenFrom, int hiddenTo) {
    private static final int[] NONE = new int[0];

    /** A chunk that scores no prompt tokens and wants no hidden states. */
    public TokenChunk(int startPosition, int[] tokenIds, boolean needsLogits) {
        this(startPosition, tokenIds, needsLogits, NONE, 0, 0);
    }

    /** A chunk that scores prompt tokens ({@code scored}). */
    public TokenChunk(int startPosition, int[] tokenIds, boolean needsLogits, int[] scored) {
        this(startPosition, tokenIds, needsLogits, scored, 0, 0);
    }

    /** A chunk that wants the hidden states of its tokens {@code [hiddenFrom, hiddenTo)}. */
    public TokenChunk(int startPosition, int[] tokenIds, boolean needsLogits, int hiddenFrom, int hiddenTo) {
        this(startPosition, tokenIds, needsLogits, NONE, hiddenFrom, hiddenTo);
    }

    public TokenChunk {
        if (hiddenFrom < 0 || hiddenTo < hiddenFrom || hiddenTo > tokenIds.length) {
            throw new IllegalArgumentException("hidden rows [" + hiddenFrom + ", " + hiddenTo + ") outside a chunk of "
                    + tokenIds.length + " tokens");
        }
        if (startPosition < 0 || tokenIds.length == 0) {
            throw new IllegalArgumentException("chunk needs a position >= 0 and at least one token");
        }
        if (scored.length > tokenIds.length - (needsLogits ? 1 : 0)) {
            throw new IllegalArgumentException(scored.length + " scored tokens in a chunk of " + tokenIds.length
                    + (needsLogits ? " whose last token samples" : ""));
        }
    }

    /** Logit rows this chunk asks for: one per scored token, one more when it samples. */
    public int logitRows() {
        return scored.length + (needsLogits ? 1 : 0);
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
        return "TokenChunk[pos=" + startPosition + ", tokens=" + Arrays.toString(tokenIds) + ", logits=" + needsLogits
                + (scored.length > 0 ? ", scored=" + scored.length : "") + "]";
    }
}
