package ml.juno.coordinator.scheduler;

import ml.juno.coordinator.sampling.TokenLogprobs;

/**
 * A token to stream (end-of-generation tokens are not streamed; they only finish the sequence).
 *
 * @param sequenceId the sequence
 * @param tokenId    the token
 * @param logprobs   log-probabilities, or {@link #NO_LOGPROBS} when the request did not ask
 */
public record SampledToken(long sequenceId, int tokenId, TokenLogprobs logprobs) {
    public static final TokenLogprobs NO_LOGPROBS = new TokenLogprobs(-1, Float.NaN, new int[0], new float[0]);

    public boolean hasLogprobs() {
        return logprobs.tokenId() >= 0;
    }
}
