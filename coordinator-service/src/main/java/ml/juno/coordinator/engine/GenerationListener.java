package ml.juno.coordinator.engine;

import java.util.List;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;

/**
 * Receives the text of all choices of one request, from the request's own output thread ({@link RequestOutput}),
 * never from the inference thread: an implementation may format, write or even block, and only its own request waits.
 * Calls come one at a time. Per choice: {@code onPromptLogprobs}? {@code onToken}* {@code onText}? {@code onChoiceFinished}; after the last
 * choice, exactly one {@link #onFinished}. A listener that throws has its request cancelled.
 */
public interface GenerationListener {

    /**
     * The prompt's log-probabilities, only when the request asked ({@code GenerationRequest.promptLogprobs}): entry
     * {@code i} scores prompt token {@code i} given the ones before it; entry 0's log-probability is NaN (nothing comes
     * before it). Comes before anything else of the choice.
     */
    default void onPromptLogprobs(int choice, List<TokenLogprobs> logprobs) {
    }

    /**
     * A token of choice {@code choice} and the text it made visible (may be empty while a possible stop string is held
     * back, or while a UTF-8 character is incomplete).
     *
     * @param logprobs meaningful only when the request asked for them ({@code logprobs.tokenId() >= 0})
     */
    void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs);

    /** Text released at the end of a choice that belongs to no new token (a held-back tail that was no stop string). */
    default void onText(int choice, String text) {
    }

    /** Choice {@code choice} is over; {@code message} is empty unless {@code reason} is ERROR. */
    void onChoiceFinished(int choice, FinishReason reason, Usage usage, String message);

    /**
     * Every choice is over.
     *
     * @param usage prompt tokens once, completion tokens of all choices, cached tokens of the best-cached choice
     */
    default void onFinished(Usage usage) {
    }
}
