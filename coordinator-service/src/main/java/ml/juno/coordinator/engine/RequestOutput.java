package ml.juno.coordinator.engine;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.StopStringMatcher;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.FinishedSequence;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.PromptScores;
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
 * arrived. With log-probabilities, a token whose text is held back (it may start a stop string) is reported once some of
 * its text is released, and not at all when all of its text falls inside the stop string: the tokens reported match
 * the text reported (a token the stop string cuts through is reported whole). When one choice fails the others are
 * cancelled; a listener that throws cancels its request and hears only
 * the finishes after that.
 */
public final class RequestOutput implements TokenEvents {
    private static final String SHUTTING_DOWN = "shutting down";
    /** How the message of a choice ended by the request's deadline starts ({@link #timedOut}). */
    private static final String TIMED_OUT = "the request's time limit of ";

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
        /** With logprobs and stop strings: tokens whose text the matcher still holds back, oldest first. */
        final ArrayDeque<Held> held;
        int decodedChars;     // text the decoder produced so far
        int releasedChars;    // of it, what the listener has had
        /** Scores of the prompt's tokens (echo with logprobs), until they go to the listener; else null. */
        List<TokenLogprobs> promptLogprobs;

        Choice(int index, GenerationRequest request, PieceDecoder decoder) {
            this.index = index;
            this.decoder = decoder;
            this.matcher = new StopStringMatcher(request.stop().stopStrings());
            this.minTokens = request.stop().minTokens();
            this.held = request.logprobs() >= 0 && !request.stop().stopStrings().isEmpty() ? new ArrayDeque<>() : null;
            if (request.promptLogprobs()) { // token 0 has nothing before it: NaN, null on the wire
                promptLogprobs = new ArrayList<>();
                promptLogprobs.add(new TokenLogprobs(request.promptTokens()[0], Float.NaN, new int[0], new float[0]));
            }
        }
    }

    /** A token whose log-probabilities wait until some of its text is released ({@code start}: its first char). */
    private record Held(int tokenId, TokenLogprobs logprobs, int start) {
    }

    private final GenerationLoop loop;
    private final Supplier<PieceDecoder> decoders;
    private final GenerationListener listener;
    private final RequestMetrics metrics;
    private final BooleanSupplier shuttingDown;
    private final LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>(); // SampledToken | FinishedSequence
    private Choice[] choices = new Choice[0]; // guarded by this; read freely by the request's thread once it runs
    private volatile boolean cancelled;
    private Object tenant;           // the caller's API key name (fairness between keys); null: none
    private long deadlineNanos;      // System.nanoTime() by which the request must be over; 0: no deadline
    private java.time.Duration limit; // the deadline's length, for the message
    private boolean expired;         // the request's thread only: the deadline passed and every choice was cancelled
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

    /** The choices submitted after this run for {@code key} (the caller's API key name): the scheduler is fair per key. */
    public RequestOutput forKey(Object key) {
        this.tenant = key;
        return this;
    }

    /**
     * The request must be over {@code limit} after {@code startNanos} ({@link System#nanoTime()}): a choice still waiting
     * or generating then is stopped (its KV blocks and sequence freed as by a cancel) and finishes with {@code error}
     * and a message that {@link #timedOut} recognises. Null or zero: no deadline. Call before {@link #submit}.
     */
    public RequestOutput deadline(java.time.Duration limit, long startNanos) {
        if (limit != null && limit.isPositive()) {
            this.limit = limit;
            this.deadlineNanos = startNanos + limit.toNanos();
            if (this.deadlineNanos == 0) {
                this.deadlineNanos = 1;
            }
        }
        return this;
    }

    /** Whether a choice's error {@code message} says the request's deadline passed ({@link #deadline}). */
    public static boolean timedOut(String message) {
        return message != null && message.startsWith(TIMED_OUT);
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
        return submit(requests, requests.size());
    }

    /**
     * As {@link #submit(List)} for several prompts: choices {@code [p * perPrompt, (p + 1) * perPrompt)} continue prompt
     * {@code p}, and the usage counts every prompt's tokens once.
     */
    public SubmitResult submit(List<GenerationRequest> requests, int perPrompt) {
        if (choices.length != 0 || requests.isEmpty()) {
            throw new IllegalStateException(requests.isEmpty() ? "a request needs at least one choice" : "submitted twice");
        }
        if (perPrompt < 1 || requests.size() % perPrompt != 0) {
            throw new IllegalArgumentException(requests.size() + " choices are not " + perPrompt + " per prompt");
        }
        synchronized (this) {
            choices = new Choice[requests.size()];
        }
        promptTokens = 0;
        for (int i = 0; i < requests.size(); i += perPrompt) {
            promptTokens += requests.get(i).promptTokens().length;
        }
        SubmitResult first = null;
        try {
            for (int i = 0; i < choices.length; i++) {
                Choice c = new Choice(i, requests.get(i), decoders.get());
                SubmitResult r = loop.submit(requests.get(i), this, tenant);
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
    public void onPromptScores(PromptScores scores) {
        events.add(scores);
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
                if (deadlineNanos == 0 || expired) {
                    event = events.take();
                } else {
                    long left = deadlineNanos - System.nanoTime();
                    event = left > 0 ? events.poll(left, java.util.concurrent.TimeUnit.NANOSECONDS) : null;
                    if (event == null) {
                        expired = true;
                        cancel(); // every choice left finishes as cancelled, reported below as the deadline's error
                        continue;
                    }
                }
            } catch (InterruptedException e) {
                cancel(); // nobody is left to hear the rest
                return;
            }
            switch (event) {
                case SampledToken t -> token(t);
                case PromptScores p -> promptScores(p);
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
            deliverPrompt(c);
            String piece = c.decoder.decode(t.tokenId());
            int start = c.decodedChars;
            c.decodedChars += piece.length();
            var r = c.matcher.feed(piece, c.generated >= c.minTokens);
            if (r.stopped()) {
                c.stopped = true;
                loop.stop(c.sequenceId); // its finish comes back like a cancel's
            }
            if (c.held == null) {
                listener.onToken(c.index, t.tokenId(), r.text(), t.logprobs());
            } else {
                c.held.add(new Held(t.tokenId(), t.logprobs(), start));
                release(c, r.text(), false);
                if (r.stopped()) {
                    c.held.clear(); // tokens wholly inside the stop string (or after it) are not part of the answer
                }
            }
        } catch (RuntimeException | Error e) { // the listener (or the decoder) failed: the client is gone
            listenerFailed = true;
            cancel();
        }
    }

    /**
     * Logprobs with stop strings: {@code text} was released after the text already released; every held token with a
     * character in it goes to the listener now, with the part of {@code text} from its first character on (up to the
     * next such token's), so the tokens reported always match the text reported. {@code all}: the choice ended
     * normally, every token left goes too.
     */
    private void release(Choice c, String text, boolean all) {
        int from = c.releasedChars;
        int upTo = from + text.length();
        int at = from;
        while (!c.held.isEmpty() && (all || c.held.peekFirst().start() < upTo)) {
            Held h = c.held.pollFirst();
            Held next = c.held.peekFirst();
            int end = next != null && (all || next.start() < upTo) ? Math.min(upTo, Math.max(at, next.start())) : upTo;
            listener.onToken(c.index, h.tokenId(), text.substring(at - from, end - from), h.logprobs());
            at = end;
        }
        if (at < upTo) {
            listener.onText(c.index, text.substring(at - from));
        }
        c.releasedChars = upTo;
    }

    private static String format(java.time.Duration d) {
        return d.toMillis() % 1000 != 0 ? d.toMillis() + " ms" : d.toSeconds() + " s";
    }

    private void promptScores(PromptScores p) {
        Choice c = choice(p.sequenceId());
        if (c.promptLogprobs != null) {
            c.promptLogprobs.addAll(p.logprobs());
        }
    }

    /** The prompt's scores (echo with logprobs) go to the listener before anything else of the choice. */
    private void deliverPrompt(Choice c) {
        if (c.promptLogprobs != null) {
            List<TokenLogprobs> lp = List.copyOf(c.promptLogprobs);
            c.promptLogprobs = null;
            listener.onPromptLogprobs(c.index, lp);
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
        } else if (reason == FinishReason.CANCELLED && expired) {
            reason = FinishReason.ERROR;
            message = TIMED_OUT + format(limit) + " passed before it was done";
        }
        remaining--;
        completionTokens += usage.completionTokens();
        cachedTokens = Math.max(cachedTokens, usage.cachedTokens());
        metrics.choiceFinished(reason);
        try {
            if (!listenerFailed && reason != FinishReason.CANCELLED && reason != FinishReason.ERROR) {
                deliverPrompt(c);
            }
            if (!listenerFailed && reason != FinishReason.CANCELLED && reason != FinishReason.ERROR && !c.stopped) {
                String tail = releaseTail(c);
                if (c.held != null) {
                    release(c, tail, true);
                } else if (!tail.isEmpty()) {
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
