package ml.juno.coordinator.service;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.engine.TokenSink;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.Usage;

/**
 * The choices of one request while they run: forwards each choice's tokens to one {@link GenerationListener},
 * adds up usage, records latency metrics, and cancels every choice at once ({@link #cancel()}: the client went
 * away; or when one choice fails).
 */
public final class Generation {

    private final InferenceEngine engine;
    private final ServedModel model;
    private final GenerationListener listener;
    private final EngineMetrics metrics;
    private final RequestKind kind;
    private final int promptTokens;
    private final long[] sequenceIds; // guarded by this; -1 = not submitted
    private final AtomicInteger remaining;
    private volatile boolean cancelled;
    // loop thread only
    private int completionTokens;
    private int cachedTokens;

    Generation(ServedModel model, int n, int promptTokens, RequestKind kind, GenerationListener listener, EngineMetrics metrics) {
        this.engine = model.engine();
        this.model = model;
        this.listener = listener;
        this.metrics = metrics;
        this.kind = kind;
        this.promptTokens = promptTokens;
        this.sequenceIds = new long[n];
        Arrays.fill(sequenceIds, -1);
        this.remaining = new AtomicInteger(n);
    }

    /** The model that serves this generation (id and fingerprint for the response). */
    public ServedModel model() {
        return model;
    }

    /** Tokens in the prompt after templating and tokenization. */
    public int promptTokens() {
        return promptTokens;
    }

    public int choices() {
        return sequenceIds.length;
    }

    /** Stops every choice; each then finishes with {@code cancelled}. Safe from any thread, more than once. */
    public void cancel() {
        cancelled = true;
        long[] ids;
        synchronized (this) {
            ids = sequenceIds.clone();
        }
        for (long id : ids) {
            if (id >= 0) {
                engine.cancel(id);
            }
        }
    }

    public boolean isCancelled() {
        return cancelled;
    }

    synchronized void submitted(int choice, long sequenceId) {
        sequenceIds[choice] = sequenceId;
    }

    TokenSink sink(int choice) {
        return new ChoiceSink(choice, System.nanoTime());
    }

    /** One choice's sink; runs on the loop thread. */
    private final class ChoiceSink implements TokenSink {
        private final int choice;
        private long last;
        private boolean first = true;

        ChoiceSink(int choice, long submittedNanos) {
            this.choice = choice;
            this.last = submittedNanos;
        }

        @Override
        public void onToken(int tokenId, String text, TokenLogprobs logprobs) {
            long now = System.nanoTime();
            if (first) {
                metrics.timeToFirstToken(now - last);
                first = false;
            } else {
                metrics.interTokenLatency(now - last);
            }
            last = now;
            listener.onToken(choice, tokenId, text, logprobs);
        }

        @Override
        public void onText(String text) {
            listener.onText(choice, text);
        }

        @Override
        public void onFinish(FinishReason reason, Usage usage, String message) {
            completionTokens += usage.completionTokens();
            cachedTokens = Math.max(cachedTokens, usage.cachedTokens());
            metrics.finished(kind, reason);
            listener.onChoiceFinished(choice, reason, message);
            if (reason == FinishReason.ERROR && !cancelled) {
                cancel(); // the other choices cannot make a whole answer any more
            }
            if (remaining.decrementAndGet() == 0) {
                listener.onFinished(new Usage(promptTokens, completionTokens, cachedTokens));
            }
        }
    }
}
