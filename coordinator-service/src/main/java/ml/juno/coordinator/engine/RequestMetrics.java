package ml.juno.coordinator.engine;

import ml.juno.coordinator.sampling.FinishReason;

/** Latencies and outcomes of one request's choices, as its {@link RequestOutput} sees them (on its own thread). */
public interface RequestMetrics {
    /** Records nothing. */
    RequestMetrics NONE = new RequestMetrics() {
        @Override
        public void timeToFirstToken(long nanos) {
        }

        @Override
        public void interTokenLatency(long nanos) {
        }

        @Override
        public void choiceFinished(FinishReason reason) {
        }
    };

    /** From submission to a choice's first token. */
    void timeToFirstToken(long nanos);

    /** Between two tokens of a choice. */
    void interTokenLatency(long nanos);

    void choiceFinished(FinishReason reason);
}
