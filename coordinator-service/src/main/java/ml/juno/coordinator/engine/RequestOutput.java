package ml.juno.coordinator.engine;

import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.StopStringMatcher;
import ml.juno.coordinator.scheduler.FinishedSequence;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.SampledToken;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;

/**
 * The output processor of one request (all its choices), on the request's own thread. The generation loop queues
 * token ids and finishes ({@link TokenEvents}, never blocking); this request's virtual thread detokenizes them, matches
 * stop strings, measures latencies and calls the {@link GenerationListener}. Text and formatting therefore never run
 * on the inference thread, and a slow listener (a client that reads slowly) holds up nobody else's steps.
 *
 * <p>A stop string ends its choice through the same path as a cancel ({@link GenerationLoop#stop}); the choice reports
 * {@code stop} with the tokens up to the one that completed the string, whatever the loop computed before the stop
 * arrived. When one choice fails the others are cancelled; a listener that throws cancels its request and hears only
 * the finishes after that.
 */
public final class RequestOutput implements TokenEvents {
    private static final String SHUTTING_DOWN = "shutting down";

    /** One choice as this request's thread sees it. */
    private static final class Choice {
        final int index;
        final PieceDecoder decoder;
        final StopStringMatcher matcher;
        final int minTokens;
        final long submittedNanos = System.nanoTime();
        long sequenceId = -1; // set before the thread starts
        long lastNanos;
        int generated;
        boolean stopped;      // a stop string matched: later tokens are the loop's overshoot

        Choice(int index, GenerationRequest request, PieceDecoder decoder) {
            this.index = index;
            this.decoder = decoder;
            this.matcher = new StopStringMatcher(request.stop().stopStrings());
            this.minTokens = request.stop().minTokens();
        }
    }

    private final GenerationLoop loop;
    private final Supplier<PieceDecoder> decoders;
    private final GenerationListener listener;
    private final RequestMetrics metrics;
    private final BooleanSupplier shuttingDown;
    private final LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>(); // SampledToken | FinishedSequence
    private Choice[] choices = new Choice[0]; // guarded by this; read freely by the request's thread once it runs
    private volatile boolean cancelled;
    // the request's thread only
    private int promptTokens;
    private int remaining;
    private int completionTokens;
    private int cachedTokens;
    private boolean listenerFailed;

    /**
     * @param decoders     a new incremental detokenizer per choice
     * @param shuttingDown true once the engine closes: choices it cancels then end with {@code error} "shutting down"
     */
    public RequestOutput(GenerationLoop loop, Supplier<PieceDecoder> decoders, GenerationListener listener,
                         RequestMetrics metrics, BooleanSupplier shuttingDown) {
        this.loop = loop;
        this.decoders = decoders;
        this.listener = listener;
        this.metrics = metrics;
        this.shuttingDown = shuttingDown;
    }

    /**
     * Queues one sequence per choice ({@code choices.get(i)} is choice {@code i}) and starts this request's thread.
     * When a choice is rejected (the queue is full) the ones already queued are cancelled and the rejection is
     * returned; their finishes still reach the listener.
     *
     * @return {@link SubmitResult.Accepted} with the first choice's sequence id, or the rejection
     * @throws IllegalArgumentException if a choice can never run (the ones already queued are cancelled)
     * @throws IllegalStateException    if called twice
     */
    public SubmitResult submit(List<GenerationRequest> requests) {
        if (choices.length != 0 || requests.isEmpty()) {
            throw new IllegalStateException(requests.isEmpty() ? "a request needs at least one choice" : "submitted twice");
        }
        synchronized (this) {
            choices = new Choice[requests.size()];
        }
        promptTokens = requests.getFirst().promptTokens().length;
        SubmitResult first = null;
        try {
            for (int i = 0; i < choices.length; i++) {
                Choice c = new Choice(i, requests.get(i), decoders.get());
                SubmitResult r = loop.submit(requests.get(i), this);
                if (!(r instanceof SubmitResult.Accepted a)) {
                    cancel();
                    return r;
                }
                c.lastNanos = c.submittedNanos;
                synchronized (this) {
                    c.sequenceId = a.sequenceId();
                    choices[i] = c;
                }
                remaining++;
                first = first == null ? r : first;
            }
            return first;
        } catch (RuntimeException e) {
            cancel();
            throw e;
        } finally {
            if (remaining > 0) {
                Thread.ofVirtual().name("juno-output-" + choices[0].sequenceId).start(this::run);
            }
        }
    }

    /** Stops every choice; each then finishes with {@code cancelled}. Safe from any thread, more than once. */
    public void cancel() {
        cancelled = true;
        Choice[] snapshot;
        synchronized (this) {
            snapshot = choices.clone();
        }
        for (Choice c : snapshot) {
            if (c != null) {
                loop.cancel(c.sequenceId);
            }
        }
    }

    public boolean isCancelled() {
        return cancelled;
    }

    /** The sequence id of choice {@code choice} (for {@link InferenceEngine#cancel}). */
    public synchronized long sequenceId(int choice) {
        return choices[choice].sequenceId;
    }

    @Override
    public void onToken(SampledToken token) {
        events.add(token);
    }

    @Override
    public void onFinished(FinishedSequence finished) {
        events.add(finished);
    }

    private void run() {
        while (remaining > 0) {
            Object event;
            try {
                event = events.take();
            } catch (InterruptedException e) {
                cancel(); // nobody is left to hear the rest
                return;
            }
            switch (event) {
                case SampledToken t -> token(t);
                case FinishedSequence f -> finished(f);
                default -> throw new IllegalStateException("unexpected event " + event);
            }
        }
    }

    private void token(SampledToken t) {
        Choice c = choice(t.sequenceId());
        if (c.stopped || listenerFailed) {
            return;
        }
        c.generated++;
        long now = System.nanoTime();
        if (c.generated == 1) {
            metrics.timeToFirstToken(now - c.submittedNanos);
        } else {
            metrics.interTokenLatency(now - c.lastNanos);
        }
        c.lastNanos = now;
        try {
            var r = c.matcher.feed(c.decoder.decode(t.tokenId()), c.generated >= c.minTokens);
            if (r.stopped()) {
                c.stopped = true;
                loop.stop(c.sequenceId); // its finish comes back like a cancel's
            }
            listener.onToken(c.index, t.tokenId(), r.text(), t.logprobs());
        } catch (RuntimeException | Error e) { // the listener (or the decoder) failed: the client is gone
            listenerFailed = true;
            cancel();
        }
    }

    private void finished(FinishedSequence f) {
        Choice c = choice(f.sequenceId());
        FinishReason reason = f.reason();
        Usage usage = f.usage();
        String message = f.message();
        if (c.stopped) {
            reason = FinishReason.STOP;
            usage = new Usage(usage.promptTokens(), c.generated, usage.cachedTokens());
            message = "";
        } else if (reason == FinishReason.CANCELLED && shuttingDown.getAsBoolean()) {
            reason = FinishReason.ERROR;
            message = SHUTTING_DOWN;
        }
        remaining--;
        completionTokens += usage.completionTokens();
        cachedTokens = Math.max(cachedTokens, usage.cachedTokens());
        metrics.choiceFinished(reason);
        try {
            if (!listenerFailed && reason != FinishReason.CANCELLED && reason != FinishReason.ERROR && !c.stopped) {
                String tail = releaseTail(c);
                if (!tail.isEmpty()) {
                    listener.onText(c.index, tail);
                }
            }
            listener.onChoiceFinished(c.index, reason, usage, message);
            if (remaining == 0) {
                listener.onFinished(new Usage(promptTokens, completionTokens, cachedTokens));
            }
        } catch (RuntimeException | Error e) {
            listenerFailed = true; // the request is over either way
        }
        if (reason == FinishReason.ERROR && !cancelled) {
            cancel(); // the other choices cannot make a whole answer any more
        }
    }

    /** Text still held by the decoder and the matcher at the end; a stop string in it still cuts it. */
    private static String releaseTail(Choice c) {
        var r = c.matcher.feed(c.decoder.flush(), true);
        return r.stopped() ? r.text() : r.text() + c.matcher.flush();
    }

    private Choice choice(long sequenceId) {
        for (Choice c : choices) {
            if (c != null && c.sequenceId == sequenceId) {
                return c;
            }
        }
        throw new IllegalStateException("sequence " + sequenceId + " is no choice of this request");
    }
}
