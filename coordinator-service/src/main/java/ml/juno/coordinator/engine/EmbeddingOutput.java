package ml.juno.coordinator.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.scheduler.EmbeddingRequest;
import ml.juno.coordinator.scheduler.FinishedSequence;
import ml.juno.coordinator.scheduler.SampledToken;
import ml.juno.coordinator.scheduler.SubmitResult;

/**
 * The inputs of one embeddings request: each is a sequence of the generation loop (prefill only, rows batched with
 * whatever else runs), all in one fairness group; the loop hands each finish, with its vector, here, and {@link #await}
 * returns them in input order. One input that fails or is cancelled fails the request, and the rest are cancelled.
 */
public final class EmbeddingOutput implements TokenEvents {
    /** The vectors in input order, and the tokens they took. */
    public record Result(List<float[]> vectors, int promptTokens) {
        public Result {
            vectors = List.copyOf(vectors);
        }
    }

    /** Why an embeddings request produced no result. */
    public static final class EmbeddingFailedException extends RuntimeException {
        EmbeddingFailedException(String message) {
            super(message);
        }
    }

    private final GenerationLoop loop;
    private final java.util.function.BooleanSupplier shuttingDown;
    private final List<Long> ids = new ArrayList<>();                // guarded by this: input order
    private final Map<Long, FinishedSequence> done = new HashMap<>(); // guarded by this
    private String failure;                                            // guarded by this
    private volatile Object tenant;                                    // the caller's key name, for fairness; null: none

    EmbeddingOutput(GenerationLoop loop, java.util.function.BooleanSupplier shuttingDown) {
        this.loop = loop;
        this.shuttingDown = shuttingDown;
    }

    /** The inputs queued after this run for {@code key} (the caller's API key name): the scheduler is fair per key. */
    public EmbeddingOutput forKey(Object key) {
        this.tenant = key;
        return this;
    }

    /**
     * Queues the next input. Only the first can be rejected (the queue is full: the request is admitted whole or not at
     * all); a rejection or a refusal cancels the inputs queued before it.
     *
     * @throws ml.juno.coordinator.scheduler.RequestLimitException if the input can never run (the earlier ones are
     *                                                             cancelled first)
     */
    public SubmitResult submit(EmbeddingRequest request) {
        SubmitResult r;
        boolean admitted;
        synchronized (this) {
            admitted = !ids.isEmpty();
        }
        try {
            r = loop.submitEmbedding(request, this, tenant, admitted, this);
        } catch (RuntimeException e) {
            refused("an input was refused: " + e.getMessage());
            throw e;
        }
        if (r instanceof SubmitResult.Accepted a) {
            synchronized (this) {
                ids.add(a.sequenceId());
            }
        } else {
            refused("the queue is full");
        }
        return r;
    }

    /** The request fails (even where its earlier inputs have already finished) and those still running are cancelled. */
    private void refused(String why) {
        synchronized (this) {
            if (failure == null) {
                failure = why;
            }
            notifyAll();
        }
        cancel();
    }

    /** Cancels every input still running (the client went away, or an input was refused). */
    public void cancel() {
        List<Long> copy;
        synchronized (this) {
            copy = List.copyOf(ids);
        }
        for (long id : copy) {
            loop.cancel(id);
        }
    }

    @Override
    public void onToken(SampledToken token) {
        // embeddings sample nothing
    }

    @Override
    public void onFinished(FinishedSequence f) {
        boolean failed;
        synchronized (this) {
            done.put(f.sequenceId(), f);
            failed = f.reason() != FinishReason.STOP && failure == null;
            if (failed) {
                failure = switch (f.reason()) {
                    case CANCELLED -> shuttingDown.getAsBoolean() ? "shutting down" : "cancelled";
                    case ERROR -> f.message();
                    default -> "ended with " + f.reason().wireName();
                };
            }
            notifyAll();
        }
        if (failed) {
            cancel();
        }
    }

    /**
     * Waits until every queued input has finished.
     *
     * @throws EmbeddingFailedException when one failed or was cancelled
     */
    public Result await() throws InterruptedException {
        synchronized (this) {
            while (done.size() < ids.size()) {
                wait();
            }
            if (failure != null) {
                throw new EmbeddingFailedException(failure);
            }
            List<float[]> vectors = new ArrayList<>(ids.size());
            int tokens = 0;
            for (long id : ids) {
                FinishedSequence f = done.get(id);
                vectors.add(f.embedding());
                tokens += f.usage().promptTokens();
            }
            return new Result(vectors, tokens);
        }
    }
}
