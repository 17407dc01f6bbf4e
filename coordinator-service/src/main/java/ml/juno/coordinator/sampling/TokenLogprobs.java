package ml.juno.coordinator.sampling;

import java.util.Arrays;

/**
 * Log-probabilities of the chosen token and of the most likely alternatives, from the log-softmax of
 * the unmodified logits (before penalties, bias, temperature and truncation), as OpenAI reports them.
 *
 * @param tokenId     the chosen token
 * @param logprob     its log-probability
 * @param topIds      the best alternatives, most likely first (may include the chosen token)
 * @param topLogprobs their log-probabilities
 */
public record TokenLogprobs(int tokenId, float logprob, int[] topIds, float[] topLogprobs) {

    public TokenLogprobs {
        if (topIds.length != topLogprobs.length) {
            throw new IllegalArgumentException("topIds and topLogprobs differ in length");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TokenLogprobs t && t.tokenId == tokenId && Float.compare(t.logprob, logprob) == 0
                && Arrays.equals(t.topIds, topIds) && Arrays.equals(t.topLogprobs, topLogprobs);
    }

    @Override
    public int hashCode() {
        return 31 * Integer.hashCode(tokenId) + Arrays.hashCode(topIds);
    }

    @Override
    public String toString() {
        return "TokenLogprobs[" + tokenId + "=" + logprob + ", top=" + Arrays.toString(topIds)
                + Arrays.toString(topLogprobs) + "]";
    }
}
