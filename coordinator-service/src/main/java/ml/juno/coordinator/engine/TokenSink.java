package ml.juno.coordinator.engine;

import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;

/**
 * Where one request's output goes, in order: {@code onToken}* then at most one {@code onText} then
 * exactly one {@code onFinish}. Called on the generation loop's thread: implementations must not block
 * (hand over to a queue or an emitter). A sink that throws has its request cancelled.
 */
public interface TokenSink {

    /**
     * A generated token and the text that became safe to show with it (may be empty while a possible stop
     * string is held back, or while a UTF-8 character is incomplete).
     *
     * @param logprobs meaningful only when the request asked for them ({@code tokenId() >= 0})
     */
    void onToken(int tokenId, String text, TokenLogprobs logprobs);

    /** Text released at the end that belongs to no new token (a held-back tail that was not a stop string). */
    default void onText(String text) {
    }

    /**
     * The request is over.
     *
     * @param message empty unless {@code reason} is {@code ERROR}
     */
    void onFinish(FinishReason reason, Usage usage, String message);
}
