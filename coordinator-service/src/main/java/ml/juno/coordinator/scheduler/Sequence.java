package ml.juno.coordinator.scheduler;

import java.util.Arrays;
import ml.juno.coordinator.kvcache.BlockTable;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplerState;

/** Scheduler-private state of one sequence. Mutable; touched only by the scheduler's thread. */
final class Sequence {
    enum State { WAITING, RUNNING, FINISHED }

    final long id;
    final long arrival;
    /** The API request this sequence is a choice of (its choices share it); fairness is per group. */
    Object group = this;
    /** The API key this sequence runs for (all sequences without one share {@link Scheduler#NO_TENANT}); fairness is per tenant first. */
    Object tenant = Scheduler.NO_TENANT;
    final GenerationRequest request;
    final int[] stopIds;          // the request's stop ids, masked while below min tokens
    final SamplerState sampler;
    final BlockTable blocks = new BlockTable();
    final int[] tokens;           // [prompt + maxTokens] prompt then generated tokens
    int length;                   // tokens known (prompt + generated)
    int numComputed;              // tokens whose KV is written
    int generated;
    int cachedPromptTokens = -1;  // set at first admission
    int scoredUpTo;               // promptLogprobs: prompt positions [0, scoredUpTo) have scored their next token
    int slot = -1;
    long scheduledStep = -1;
    /** The scheduler step at which this sequence was last queued (submitted or preempted) or admitted: its age in its state. */
    long since;
    /** Its place among waiting sequences of equal standing: the step it was submitted, or last gave up its slot to the time-slice rule. */
    long queued;
    /** The step whose update this sequence waits for (its last row's step until then), or -1: never in two steps at once. */
    long inFlight = -1;
    FinishReason cancelled;       // null while live; else how its cancel ends it
    ml.juno.engine.embedding.Pooling pooling;     // an embedding's pooling; null for generation
    ml.juno.engine.embedding.EmbeddingPool pool;  // its rows so far (made at the first hidden row; null after a preemption)
    State state = State.WAITING;

    Sequence(long id, long arrival, GenerationRequest request, SamplerState sampler) {
        this.id = id;
        this.arrival = arrival;
        this.request = request;
        this.sampler = sampler;
        this.stopIds = request.stop().stopTokenIds();
        this.length = request.promptLength();
        this.tokens = Arrays.copyOf(request.promptTokens(), length + request.stop().maxTokens());
    }

    int[] tokens() {
        return tokens;
    }

    int promptLength() {
        return request.promptLength();
    }

    /** Prompt positions whose logits still have to score the prompt token after them (0 unless it asked). */
    boolean scoresPrompt() {
        return request.promptLogprobs() && scoredUpTo < promptLength() - 1;
    }

    int priority() {
        return request.priority();
    }

    boolean isEmbedding() {
        return pooling != null;
    }

    /** Prefill done: only the last sampled token is left to compute. */
    boolean isDecoding() {
        return generated > 0 && numComputed == length - 1;
    }

    void append(int token) {
        tokens[length++] = token;
        generated++;
    }

    Usage usage() {
        return new Usage(promptLength(), generated, Math.max(0, cachedPromptTokens));
    }

    @Override
    public String toString() {
        return "Sequence[" + id + " " + state + " len=" + length + " computed=" + numComputed
                + " gen=" + generated + " " + Arrays.toString(Arrays.copyOf(tokens, Math.min(length, 8))) + "]";
    }
}
