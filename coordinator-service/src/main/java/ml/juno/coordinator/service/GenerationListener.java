package ml.juno.coordinator.service;

import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;

/**
 * Receives the output of all choices of one request. Called on the generation loop's thread, one call at a
 * time: implementations must not block. Per choice: {@code onToken}* {@code onText}? {@code onChoiceFinished};
 * after the last choice, exactly one {@link #onFinished}.
 */
public interface GenerationListener {

    /** A token of choice {@code choice} and the text it made visible (may be empty). */
    void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs);

    /** Text released at the end of a choice that belongs to no new token. */
    void onText(int choice, String text);

    /** Choice {@code choice} is over; {@code message} is empty unless {@code reason} is ERROR. */
    void onChoiceFinished(int choice, FinishReason reason, String message);

    /**
     * Every choice is over.
     *
     * @param usage prompt tokens once, completion tokens of all choices, cached tokens of the best-cached choice
     */
    void onFinished(Usage usage);

}
