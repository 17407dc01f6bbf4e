package ml.juno.coordinator.engine;

import ml.juno.coordinator.scheduler.FinishedSequence;
import ml.juno.coordinator.scheduler.SampledToken;

/**
 * Where the generation loop hands a sequence's tokens: token ids and the finish, no text. Called on the inference
 * thread, in order, per sequence {@code onToken}* then exactly one {@code onFinished}; implementations must not block
 * (they queue the event for the request's own thread, see {@link RequestOutput}).
 */
public interface TokenEvents {
    void onToken(SampledToken token);

    void onFinished(FinishedSequence finished);
}
