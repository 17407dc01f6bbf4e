package ml.juno.coordinator.engine;

import ml.juno.coordinator.scheduler.FinishedSequence;
import ml.juno.coordinator.scheduler.PromptScores;
import ml.juno.coordinator.scheduler.SampledToken;

/**
 * Where the generation loop hands a sequence's tokens: token ids and the finish, no text. Called on the inference
 * thread, in order, per sequence {@code onPromptScores}* {@code onToken}* then exactly one {@code onFinished}; implementations must not block
 * (they queue the event for the request's own thread, see {@link RequestOutput}).
 */
public interface TokenEvents {
    /** Scores of the sequence's prompt tokens (only for a request that asked, before its first token). */
    default void onPromptScores(PromptScores scores) {
    }

    void onToken(SampledToken token);

    void onFinished(FinishedSequence finished);
}
