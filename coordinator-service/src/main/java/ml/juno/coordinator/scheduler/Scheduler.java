package ml.juno.coordinator.scheduler;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import ml.juno.coordinator.kvcache.KvCacheManager;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplerState;
import ml.juno.coordinator.sampling.TokenLogprobs;

/**
 * Continuous-batching scheduler (vLLM's idea, in plain Java).
 *
 * <p>{@link #schedule()} builds one step under the token budget: first one decode row per running
 * sequence that has finished its prompt (so running streams never stall), then prefill chunks of
 * running sequences, then newly admitted waiting sequences (by priority, then arrival), each taking
 * what budget is left; a long prompt is split over several steps. When a decode row needs a block and
 * none is left, the worst running sequence (priority, then arrival) is preempted: its blocks are freed
 * and it goes back to waiting, to be recomputed later (mostly from the prefix cache). Fairness between tenants and
 * groups (see {@link #submit(GenerationRequest, Object, Object)}) may also take a slot, at most one per step: by running
 * counts, or by the time slice of {@link SchedulerConfig#quantumSteps()} (see {@code quantumVictim}).
 *
 * <p>Each row carries its sequence's {@link SamplerState}; the engine samples next to the logits and
 * {@link #update} takes the sampled token ids: it appends them, checks stop tokens and lengths, releases
 * finished sequences' blocks and reports tokens and finishes. Stop strings are text-level: the request's
 * output processor reports a match through {@link #cancel(long, FinishReason)}, the path of a cancel.
 *
 * <p>Not thread-safe: one thread (the generation loop) or external locking.
 */
public final class Scheduler {
    private static final Comparator<Sequence> ORDER =
            Comparator.comparingInt(Sequence::priority).thenComparingLong(s -> s.arrival);

    private final SchedulerConfig config;
    private final KvCacheManager kv;
    private final int vocab;
    private final PriorityQueue<Sequence> waiting = new PriorityQueue<>(ORDER);
    private final List<Sequence> running = new ArrayList<>(); // sorted by ORDER
    private final Map<Long, Sequence> byId = new HashMap<>();
    private final Map<Object, int[]> runningByGroup = new java.util.IdentityHashMap<>(); // running sequences per group
    private final Map<Object, int[]> runningByTenant = new HashMap<>(); // running sequences per tenant (API key)
    private final Map<Object, int[]> prefillByTenant = new HashMap<>(); // this step: [want, given] prompt tokens per tenant
    /** The tenant of sequences submitted without one: they share it, so fairness among them is per group only. */
    static final Object NO_TENANT = new Object() {
        @Override
        public String toString() {
            return "no tenant";
        }
    };
    private final List<FinishedSequence> pendingFinished = new ArrayList<>();
    private final int[] freeSlots;
    private int freeSlotCount;
    private long nextId = 1;
    private long arrivals;
    private long step;
    private long preemptions;
    private long fairnessPreemptions;
    private long quantumPreemptions;
    private long generatedTokens;

    /** @param vocabSize tokens of the model's vocabulary: prompts and sampled tokens are checked against it */
    public Scheduler(SchedulerConfig config, KvCacheManager kv, int vocabSize) {
        long capacity = (long) kv.blockSize() * kv.numBlocks();
        if (config.maxSequenceLength() > capacity) {
            throw new IllegalArgumentException("maxSequenceLength " + config.maxSequenceLength()
                    + " exceeds the KV pool of " + capacity + " tokens");
        }
        if (vocabSize <= 0) {
            throw new IllegalArgumentException("vocab size must be > 0, got " + vocabSize);
        }
        this.config = config;
        this.kv = kv;
        this.vocab = vocabSize;
        this.freeSlots = new int[config.maxRunning()];
        for (int i = 0; i < freeSlots.length; i++) {
            freeSlots[i] = freeSlots.length - 1 - i;
        }
        this.freeSlotCount = freeSlots.length;
    }

    /**
     * Queues a request. This is the one check of a request against the model: prompt tokens and stop tokens within the
     * vocabulary, the prompt plus its max tokens within the context, the logit bias within the vocabulary.
     *
     * @throws RequestLimitException if the request can never run (what is at fault, and by how much)
     */
    public SubmitResult submit(GenerationRequest request) {
        return submit(request, null);
    }

    /**
     * Queues a request as one choice of {@code group} (an API request: its choices share the group; null: a group of
     * its own). Slots are shared fairly between groups: admission prefers the group with the fewest running sequences,
     * and a group with none running may take a slot from the group holding the most (at least two), so one request of
     * {@code n=16} cannot keep another from its first token until it is done.
     *
     * @throws IllegalArgumentException if the request can never run (too long, tokens outside the vocabulary)
     */
    public SubmitResult submit(GenerationRequest request, Object group) {
        return submit(request, group, null);
    }

    /**
     * As {@link #submit(GenerationRequest, Object)} for {@code tenant} (an API key's name; equal tenants are one; null:
     * the tenant of everything submitted without one). Fairness is by tenant first, then by group within a tenant:
     * admission prefers the tenant with the fewest running sequences, then its group with the fewest; a request with
     * none running may take a slot from another tenant holding at least two more than its own, or from a group of its
     * own tenant holding at least two; and when several tenants have prompt tokens to compute, a step's budget is shared
     * between them (each gets at most an equal share of what is left, what one does not need going to the others), so
     * one key's many or long requests cannot keep another key from its first token.
     */
    public SubmitResult submit(GenerationRequest request, Object group, Object tenant) {
        int promptLength = request.promptLength();
        int maxTokens = request.stop().maxTokens();
        for (int i = 0; i < promptLength; i++) {
            int t = request.promptToken(i);
            if (t < 0 || t >= vocab) {
                throw new RequestLimitException(RequestLimitException.Part.PROMPT_TOKEN, t, vocab,
                        "prompt token " + t + " at " + i + " outside the vocabulary of " + vocab);
            }
        }
        if ((long) promptLength + maxTokens > config.maxSequenceLength()) {
            throw new RequestLimitException(promptLength >= config.maxSequenceLength()
                    ? RequestLimitException.Part.PROMPT_LENGTH : RequestLimitException.Part.MAX_TOKENS,
                    promptLength >= config.maxSequenceLength() ? promptLength : maxTokens, config.maxSequenceLength(),
                    "prompt of " + promptLength + " tokens plus max tokens " + maxTokens
                            + " exceeds the context length " + config.maxSequenceLength());
        }
        int maxBias = request.sampling().logitBias().maxTokenId();
        if (maxBias >= vocab) {
            throw new RequestLimitException(RequestLimitException.Part.LOGIT_BIAS_TOKEN, maxBias, vocab,
                    "logit bias names token " + maxBias + " outside the vocabulary of " + vocab);
        }
        for (int id : request.stop().stopTokenIds()) {
            if (id >= vocab) {
                throw new RequestLimitException(RequestLimitException.Part.STOP_TOKEN, id, vocab,
                        "stop token " + id + " outside the vocabulary of " + vocab);
            }
        }
        if (waiting.size() >= config.maxWaiting()) {
            return new SubmitResult.Rejected(retryAfter(), "queue full: " + waiting.size() + " requests waiting");
        }
        SamplerState state = new SamplerState(request.sampling(), vocab, request.logprobs());
        Sequence seq = new Sequence(nextId++, arrivals++, request, state);
        if (group != null) {
            seq.group = group;
        }
        if (tenant != null) {
            seq.tenant = tenant;
        }
        state.accept(seq.tokens(), 0, seq.length);
        seq.since = step;
        seq.queued = step;
        waiting.add(seq);
        byId.put(seq.id, seq);
        return new SubmitResult.Accepted(seq.id);
    }

    /**
     * Queues an input to embed as one sequence of {@code group} (null: a group of its own): prefill only, its final
     * hidden states pooled as they arrive, finished with its vector ({@link FinishedSequence#embedding()}) when the last
     * token is computed. Checked as generation is: tokens within the vocabulary, the input within the context. A
     * request is admitted whole or not at all: the queue bound is checked for its first input only ({@code admitted}
     * false), so a request of more inputs than the queue holds still runs on an idle server.
     *
     * @throws RequestLimitException if the input can never run
     */
    public SubmitResult submitEmbedding(EmbeddingRequest request, Object group) {
        return submitEmbedding(request, group, null, false);
    }

    /**
     * As {@link #submitEmbedding(EmbeddingRequest, Object)} for {@code tenant} (see
     * {@link #submit(GenerationRequest, Object, Object)}); {@code admitted}: an earlier input of the same request is
     * already queued, so this one is past the queue bound.
     */
    public SubmitResult submitEmbedding(EmbeddingRequest request, Object group, Object tenant, boolean admitted) {
        int[] prompt = request.promptTokens();
        for (int i = 0; i < prompt.length; i++) {
            if (prompt[i] < 0 || prompt[i] >= vocab) {
                throw new RequestLimitException(RequestLimitException.Part.PROMPT_TOKEN, prompt[i], vocab,
                        "input token " + prompt[i] + " at " + i + " outside the vocabulary of " + vocab);
            }
        }
        if (prompt.length > config.maxSequenceLength()) {
            throw new RequestLimitException(RequestLimitException.Part.PROMPT_LENGTH, prompt.length,
                    config.maxSequenceLength(), "input of " + prompt.length + " tokens exceeds the context length "
                    + config.maxSequenceLength());
        }
        if (!admitted && waiting.size() >= config.maxWaiting()) {
            return new SubmitResult.Rejected(retryAfter(), "queue full: " + waiting.size() + " requests waiting");
        }
        GenerationRequest shape = new GenerationRequest(prompt, ml.juno.coordinator.sampling.SamplingParams.greedy(),
                ml.juno.coordinator.sampling.StopCondition.of(1), request.priority(), -1);
        Sequence seq = new Sequence(nextId++, arrivals++, shape, new SamplerState(shape.sampling(), vocab, -1));
        seq.pooling = request.pooling();
        if (group != null) {
            seq.group = group;
        }
        if (tenant != null) {
            seq.tenant = tenant;
        }
        waiting.add(seq);
        byId.put(seq.id, seq);
        return new SubmitResult.Accepted(seq.id);
    }

    /**
     * What a rejected client is told to wait: the configured time for each batch's worth of sequences ahead of it (the
     * queue is full, so about {@code maxWaiting / maxRunning} batches), at most 60 s, so that clients that retry at
     * once back off as the queue grows.
     */
    java.time.Duration retryAfter() {
        long batches = 1 + (waiting.size() + running.size()) / Math.max(1, config.maxRunning());
        long millis = Math.min(60_000, Math.max(1, config.retryAfter().toMillis()) * batches);
        return java.time.Duration.ofMillis(millis);
    }

    /**
     * Cancels a sequence at any point. A waiting one leaves at once; a running one is released at the
     * next {@link #schedule()}. Its finish ({@code cancelled}) is reported by the next {@link #update}.
     *
     * @return false when the id is unknown or already finished
     */
    public boolean cancel(long sequenceId) {
        return cancel(sequenceId, FinishReason.CANCELLED);
    }

    /**
     * Ends a sequence at any point, as {@link #cancel(long)} does, but reports {@code reason}: {@code stop} when the
     * caller found a stop string in its text.
     *
     * @return false when the id is unknown or already finished
     */
    public boolean cancel(long sequenceId, FinishReason reason) {
        Sequence seq = byId.get(sequenceId);
        if (seq == null || seq.state == Sequence.State.FINISHED || seq.cancelled != null) {
            return false;
        }
        seq.cancelled = reason;
        if (seq.state == Sequence.State.WAITING) {
            waiting.remove(seq);
            pendingFinished.add(release(seq, reason, ""));
        }
        return true;
    }

    /**
     * Ends a sequence now (the engine is closing, say) and releases its blocks.
     *
     * @return the finish record, for the caller to report
     * @throws IllegalArgumentException if the id is unknown or already finished
     */
    public FinishedSequence finish(long sequenceId, FinishReason reason) {
        Sequence seq = byId.get(sequenceId);
        if (seq == null || seq.state == Sequence.State.FINISHED) {
            throw new IllegalArgumentException("no live sequence " + sequenceId);
        }
        if (seq.state == Sequence.State.WAITING) {
            waiting.remove(seq);
        }
        return release(seq, reason, "");
    }

    /** Builds the next step. May be empty (nothing to run, or everything waits for blocks). */
    public StepPlan schedule() {
        return schedule(Integer.MAX_VALUE);
    }

    /**
     * Builds the next step from the sequences not in a step still in flight (planned, its {@link #update} not applied
     * yet: a sequence is never in two steps at once), with at most {@code maxRows} rows of running sequences (decode rows
     * and prefill chunks; admissions are not counted), so that a pipelined loop can keep another step, of other
     * sequences, in flight. May be empty.
     */
    public StepPlan schedule(int maxRows) {
        step++;
        for (int i = running.size() - 1; i >= 0; i--) {
            Sequence seq = running.get(i);
            if (seq.cancelled != null && seq.inFlight < 0) { // in flight: released after its step's update
                pendingFinished.add(release(seq, seq.cancelled, ""));
            }
        }
        rebalance();
        List<ScheduledRow> rows = new ArrayList<>();
        int budget = config.maxTokensPerStep();

        // 1. decode rows, best first; preempt from the worst end when blocks run out
        for (int i = 0; i < running.size() && budget > 0 && rows.size() < maxRows; i++) {
            Sequence seq = running.get(i);
            if (!seq.isDecoding() || seq.inFlight >= 0) {
                continue;
            }
            boolean ok = true;
            while (!kv.allocateSlots(seq.blocks, seq.length)) {
                Sequence victim = worstUnscheduled();
                preempt(victim);
                if (victim == seq) {
                    ok = false;
                    break;
                }
            }
            if (!ok) {
                break; // seq was the last candidate
            }
            rows.add(row(seq, 1));
            budget--;
        }

        // 2. prefill chunks of running sequences, each tenant within its share of the budget
        int share = prefillShare(budget);
        for (int i = 0; i < running.size() && budget > 0 && rows.size() < maxRows; i++) {
            Sequence seq = running.get(i);
            if (seq.scheduledStep == step || seq.isDecoding() || seq.inFlight >= 0) {
                continue;
            }
            int chunk = Math.min(seq.length - seq.numComputed, Math.min(budget, room(seq, share)));
            int fit = (seq.blocks.blockCount() + kv.availableBlocks()) * kv.blockSize() - seq.numComputed;
            chunk = Math.min(chunk, fit);
            if (chunk <= 0 || !kv.allocateSlots(seq.blocks, seq.numComputed + chunk)) {
                continue;
            }
            rows.add(row(seq, chunk));
            budget -= chunk;
            given(seq, chunk);
        }

        // 3. admit waiting sequences (of tenants with some of their share left)
        while (budget > 0 && freeSlotCount > 0 && !waiting.isEmpty()) {
            Sequence seq = nextWaiting(share);
            if (seq == null) {
                break; // every waiting tenant has had its share of this step
            }
            int allowed = Math.min(budget, room(seq, share));
            int cached = seq.isEmbedding() ? kv.admitUncached(seq.blocks, seq.length, allowed)
                    : kv.admit(seq.blocks, seq.tokens(), seq.length, allowed, seq.request.adapter(),
                    seq.scoresPrompt() ? seq.scoredUpTo : Integer.MAX_VALUE);
            if (cached < 0) {
                break; // the best waiting sequence does not fit; nobody overtakes it
            }
            waiting.remove(seq);
            seq.numComputed = cached;
            if (seq.cachedPromptTokens < 0) {
                seq.cachedPromptTokens = Math.min(cached, seq.promptLength());
            }
            seq.state = Sequence.State.RUNNING;
            seq.since = step;
            seq.slot = freeSlots[--freeSlotCount];
            insertRunning(seq);
            int chunk = Math.min(seq.length - cached, allowed);
            rows.add(row(seq, chunk));
            budget -= chunk;
            given(seq, chunk);
        }

        // 4. all running sequences stuck in prefill without blocks: free the worst so the rest can move
        if (rows.isEmpty() && !running.isEmpty() && !anyInFlight()) { // else a step in flight will free or move something
            preempt(running.get(running.size() - 1));
        }
        return new StepPlan(step, rows);
    }

    /**
     * Applies the engine's answer to {@code plan}: advances computed tokens, registers full blocks in the
     * prefix cache, appends the tokens sampled for the rows that asked, and finishes sequences on a stop
     * token or at max tokens. A {@link StepResult.Failure} finishes every sequence of the plan with
     * {@code error}; a row whose sampling failed finishes its own sequence so.
     */
    public StepOutcome update(StepPlan plan, StepResult result) {
        List<SampledToken> tokens = new ArrayList<>();
        List<FinishedSequence> finished = new ArrayList<>(pendingFinished);
        pendingFinished.clear();
        boolean[] mine = landed(plan);
        String failure = switch (result) {
            case StepResult.Failure f -> f.message();
            case StepResult.Tokens t when t.rows() != plan.sampledRowCount() ->
                    "engine returned " + t.rows() + " sampled rows for " + plan.sampledRowCount() + " requested";
            case StepResult.Tokens t when t.hidden().rows() != plan.hiddenRowCount() ->
                    "engine returned " + t.hidden().rows() + " hidden states for " + plan.hiddenRowCount() + " requested";
            case StepResult.Tokens t -> null;
        };
        if (failure != null) {
            for (int r = 0; r < plan.rows().size(); r++) {
                Sequence seq = live(plan.rows().get(r).sequenceId());
                if (seq != null && mine[r]) { // a failed step fails its own sequences, no other step's
                    finished.add(release(seq, FinishReason.ERROR, failure));
                }
            }
            return new StepOutcome(tokens, finished);
        }
        StepResult.Tokens sampled = (StepResult.Tokens) result;
        List<PromptScores> scores = List.of();
        int sampledRow = 0;
        int hiddenRow = 0;
        for (int r = 0; r < plan.rows().size(); r++) {
            ScheduledRow row = plan.rows().get(r);
            int k = row.needsLogits() ? sampledRow++ : -1;
            int firstHidden = hiddenRow;
            hiddenRow += row.chunk().hiddenCount();
            Sequence seq = live(row.sequenceId());
            if (seq == null || !mine[r] || seq.cancelled != null || seq.numComputed != row.chunk().startPosition()) {
                continue; // finished, cancelled or preempted since the plan was made
            }
            if (row.chunk().scored().length > 0) {
                if (scores.isEmpty()) {
                    scores = new ArrayList<>();
                }
                PromptScores s = scores(seq, row.chunk(), sampled.scores() == null ? null : sampled.scores()[r]);
                if (s == null) {
                    finished.add(release(seq, FinishReason.ERROR, "engine returned no prompt log-probabilities"));
                    continue;
                }
                if (!s.logprobs().isEmpty()) {
                    scores.add(s);
                }
            }
            seq.numComputed += row.tokenCount();
            if (seq.isEmbedding()) {
                pool(seq, row.chunk(), sampled.hidden(), firstHidden, finished);
                continue;
            }
            kv.commit(seq.blocks, seq.tokens(), seq.numComputed, seq.request.adapter());
            if (!row.needsLogits()) {
                continue;
            }
            int token = sampled.tokenIds()[k];
            if (token == StepResult.NO_TOKEN) {
                finished.add(release(seq, FinishReason.ERROR, sampled.failures()[k]));
            } else if (token < 0 || token >= vocab) {
                finished.add(release(seq, FinishReason.ERROR, "engine sampled token " + token
                        + ", outside the vocabulary of " + vocab));
            } else {
                accept(seq, token, sampled.logprobs()[k], tokens, finished);
            }
        }
        return new StepOutcome(scores, tokens, finished);
    }

    /**
     * Which rows of {@code plan} are still their sequence's step (the sequence has not been planned again since), the
     * in-flight marks of those cleared: their sequences may be planned again.
     */
    private boolean[] landed(StepPlan plan) {
        boolean[] mine = new boolean[plan.rows().size()];
        for (int r = 0; r < mine.length; r++) {
            Sequence seq = byId.get(plan.rows().get(r).sequenceId());
            if (seq != null && seq.inFlight == plan.stepId()) {
                seq.inFlight = -1;
                mine[r] = true;
            }
        }
        return mine;
    }

    private boolean anyInFlight() {
        for (Sequence s : running) {
            if (s.inFlight >= 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * True when {@link #schedule} may find something to do now: a sequence waits, a finish is unreported, or a running
     * sequence is not in a step in flight.
     */
    public boolean hasIdleWork() {
        if (!waiting.isEmpty() || !pendingFinished.isEmpty()) {
            return true;
        }
        for (Sequence s : running) {
            if (s.inFlight < 0) {
                return true;
            }
        }
        return false;
    }

    /** The scores of {@code chunk}'s prompt tokens that {@code seq} has not had yet (a recomputed chunk scores again). */
    private static PromptScores scores(Sequence seq, TokenChunk chunk, TokenLogprobs[] got) {
        int m = chunk.scored().length;
        if (got == null || got.length != m) {
            return null;
        }
        int from = Math.max(0, seq.scoredUpTo - chunk.startPosition());
        List<TokenLogprobs> fresh = new ArrayList<>(Math.max(0, m - from));
        for (int i = from; i < m; i++) {
            fresh.add(got[i]);
        }
        seq.scoredUpTo = Math.max(seq.scoredUpTo, chunk.startPosition() + m);
        return new PromptScores(seq.id, chunk.startPosition() + from + 1, fresh);
    }

    /** An embedding's rows of this step into its pool; finished with its vector after the last token. */
    private void pool(Sequence seq, TokenChunk chunk, StepResult.Hidden hidden, int first,
                      List<FinishedSequence> finished) {
        try {
            if (chunk.hiddenCount() > 0) {
                if (seq.pool == null) {
                    seq.pool = new ml.juno.engine.embedding.EmbeddingPool(seq.pooling, seq.length, hidden.dim());
                }
                for (int i = chunk.hiddenFrom(); i < chunk.hiddenTo(); i++) {
                    seq.pool.add(hidden.data(), (first + i - chunk.hiddenFrom()) * hidden.dim(), chunk.position(i));
                }
            }
            if (seq.numComputed == seq.length) {
                if (seq.pool == null) {
                    throw new IllegalStateException("no hidden state arrived for " + seq.pooling + " pooling");
                }
                finished.add(release(seq, FinishReason.STOP, "", seq.pool.vector()));
            }
        } catch (RuntimeException e) {
            finished.add(release(seq, FinishReason.ERROR, "pooling failed: " + e.getMessage()));
        }
    }

    private void accept(Sequence seq, int token, TokenLogprobs lp,
                        List<SampledToken> tokens, List<FinishedSequence> finished) {
        var stop = seq.request.stop();
        generatedTokens++;
        seq.sampler.accept(token);
        seq.append(token);
        if (stop.isStopToken(token)) {
            finished.add(release(seq, FinishReason.STOP, ""));
            return;
        }
        if (!seq.sampler.advanceGrammar(token)) {
            finished.add(release(seq, FinishReason.ERROR, "token " + token + " is not allowed by the request's grammar"));
            return;
        }
        tokens.add(new SampledToken(seq.id, token, lp));
        if (seq.sampler.grammarComplete()) { // the text is a whole sentence and nothing may follow: done
            finished.add(release(seq, FinishReason.STOP, ""));
        } else if (seq.generated >= stop.maxTokens() || seq.length >= config.maxSequenceLength()) {
            finished.add(release(seq, FinishReason.LENGTH, ""));
        }
    }

    /** True while anything waits, runs or has an unreported finish. */
    public boolean hasWork() {
        return !waiting.isEmpty() || !running.isEmpty() || !pendingFinished.isEmpty();
    }

    public int waitingCount() {
        return waiting.size();
    }

    public int runningCount() {
        return running.size();
    }

    /** Tokens sampled since the start, end-of-generation tokens included. */
    public long generatedTokens() {
        return generatedTokens;
    }

    public long preemptions() {
        return preemptions;
    }

    public KvCacheManager kvCache() {
        return kv;
    }

    private Sequence live(long id) {
        Sequence seq = byId.get(id);
        return seq != null && seq.state == Sequence.State.RUNNING ? seq : null;
    }

    private static final int[] NO_SCORES = new int[0];

    private ScheduledRow row(Sequence seq, int count) {
        seq.scheduledStep = step;
        seq.inFlight = step;
        int start = seq.numComputed;
        int[] chunkTokens = Arrays.copyOfRange(seq.tokens(), start, start + count);
        if (seq.isEmbedding()) {
            int from = 0;
            while (from < count && !seq.pooling.uses(start + from, seq.length)) {
                from++;
            }
            int to = from;
            while (to < count && seq.pooling.uses(start + to, seq.length)) {
                to++;
            }
            int[] blocks = Arrays.copyOf(seq.blocks.toArray(), kv.blocksFor(start + count));
            return new ScheduledRow(seq.id, seq.slot, new TokenChunk(start, chunkTokens, false, from, to),
                    new KvPlacement(kv.blockSize(), blocks), seq.sampler, 0);
        }
        boolean needsLogits = start + count == seq.length;
        if (needsLogits && seq.generated < seq.request.stop().minTokens()) {
            seq.sampler.suppress(seq.stopIds); // no end of generation before min tokens
        } else if (needsLogits) {
            seq.sampler.clearSuppressed();
        }
        int[] blocks = Arrays.copyOf(seq.blocks.toArray(), kv.blocksFor(start + count));
        int[] scored = NO_SCORES;
        if (seq.scoresPrompt()) {
            // every prompt token of the chunk but the prompt's last scores the token after it (a recomputed one again)
            int m = Math.max(0, Math.min(start + count, seq.promptLength() - 1) - start);
            scored = Arrays.copyOfRange(seq.tokens(), start + 1, start + 1 + m);
        }
        return new ScheduledRow(seq.id, seq.slot, new TokenChunk(start, chunkTokens, needsLogits, scored),
                new KvPlacement(kv.blockSize(), blocks), seq.sampler, seq.request.adapter());
    }

    /**
     * The waiting sequence to admit next: best priority, then the tenant with the fewest running, then the group with
     * the fewest running, then the longest queued (since submission, or since it last yielded its slot to the time-slice
     * rule), then arrival.
     */
    private Sequence nextWaiting() {
        return nextWaiting(Integer.MAX_VALUE);
    }

    /** As {@link #nextWaiting()} among the sequences whose tenant has room left in this step's {@code share}; null if none. */
    private Sequence nextWaiting(int share) {
        Sequence best = null;
        int bestTenant = 0;
        int bestGroup = 0;
        for (Sequence s : waiting) {
            if (share != Integer.MAX_VALUE && room(s, share) <= 0) {
                continue;
            }
            int t = runningOf(runningByTenant, s.tenant);
            int g = runningOf(runningByGroup, s.group);
            if (best == null || s.priority() < best.priority()
                    || (s.priority() == best.priority() && (t < bestTenant || (t == bestTenant
                    && (g < bestGroup || (g == bestGroup && (s.queued < best.queued
                    || (s.queued == best.queued && s.arrival < best.arrival)))))))) {
                best = s;
                bestTenant = t;
                bestGroup = g;
            }
        }
        return best;
    }

    /**
     * The most prompt tokens one tenant may compute this step out of {@code budget}: everything when at most one tenant
     * has prompt tokens waiting to be computed; else the water level at which the tenants' wants fill the budget (each
     * gets what it wants up to the level, so what one leaves goes to the others). Wants: the prompt tokens left of
     * running sequences in prefill, and of waiting ones while a slot is free.
     */
    private int prefillShare(int budget) {
        prefillByTenant.clear();
        if (budget <= 0) {
            return budget;
        }
        for (Sequence s : running) {
            if (s.scheduledStep != step && !s.isDecoding()) {
                want(s, s.length - s.numComputed);
            }
        }
        if (freeSlotCount > 0) {
            for (Sequence s : waiting) {
                want(s, s.length);
            }
        }
        if (prefillByTenant.size() <= 1) {
            return Integer.MAX_VALUE;
        }
        int[] wants = new int[prefillByTenant.size()];
        int k = 0;
        for (int[] w : prefillByTenant.values()) {
            wants[k++] = w[0];
        }
        Arrays.sort(wants);
        int left = budget;
        for (int i = 0; i < wants.length; i++) {
            int level = left / (wants.length - i);
            if (wants[i] > level) {
                return Math.max(1, level);
            }
            left -= wants[i];
        }
        return Integer.MAX_VALUE; // everyone's wants fit
    }

    private void want(Sequence s, int tokens) {
        int[] w = prefillByTenant.computeIfAbsent(s.tenant, t -> new int[2]);
        w[0] = (int) Math.min(Integer.MAX_VALUE, (long) w[0] + tokens);
    }

    /** Prompt tokens {@code seq}'s tenant may still compute this step under {@code share}. */
    private int room(Sequence seq, int share) {
        if (share == Integer.MAX_VALUE) {
            return Integer.MAX_VALUE;
        }
        int[] w = prefillByTenant.get(seq.tenant);
        return w == null ? share : share - w[1];
    }

    private void given(Sequence seq, int tokens) {
        int[] w = prefillByTenant.get(seq.tenant);
        if (w != null) {
            w[1] += tokens;
        }
    }

    private static int runningOf(Map<Object, int[]> counts, Object key) {
        int[] n = counts.get(key);
        return n == null ? 0 : n[0];
    }

    private void countRunning(Sequence seq, int delta) {
        count(runningByGroup, seq.group, delta);
        count(runningByTenant, seq.tenant, delta);
    }

    private static void count(Map<Object, int[]> counts, Object key, int delta) {
        int[] n = counts.computeIfAbsent(key, g -> new int[1]);
        n[0] += delta;
        if (n[0] <= 0) {
            counts.remove(key);
        }
    }

    /**
     * Every slot taken and the next waiting request has none running: a sequence of no better priority gives up its slot,
     * to be recomputed later, if it belongs to another tenant holding at least two more running sequences than the
     * waiting one's tenant, or to a group of the same tenant holding at least two. Of those, the one of the tenant with
     * the most running, then of the group with the most, then the latest to arrive. At most one per step.
     */
    private void rebalance() {
        if (freeSlotCount > 0 || waiting.isEmpty()) {
            return;
        }
        Sequence next = nextWaiting();
        if (runningOf(runningByGroup, next.group) > 0) {
            return;
        }
        int own = runningOf(runningByTenant, next.tenant);
        Sequence victim = null;
        int mostTenant = 0;
        int mostGroup = 0;
        for (Sequence s : running) {
            if (s.priority() < next.priority() || s.inFlight >= 0) { // a step in flight holds it (and has drawn from its generator)
                continue;
            }
            int t = runningOf(runningByTenant, s.tenant);
            int g = runningOf(runningByGroup, s.group);
            boolean eligible = s.tenant.equals(next.tenant) ? g >= 2 : t >= own + 2;
            if (!eligible) {
                continue;
            }
            if (victim == null || t > mostTenant || (t == mostTenant && (g > mostGroup
                    || (g == mostGroup && s.arrival > victim.arrival)))) { // ties: the latest, with the least work to redo
                victim = s;
                mostTenant = t;
                mostGroup = g;
            }
        }
        if (victim == null) {
            victim = quantumVictim(next);
            if (victim != null) {
                quantumPreemptions++;
                yielded(victim);
            }
        }
        if (victim != null) {
            preempt(victim);
            fairnessPreemptions++;
        }
    }

    /**
     * The time-slice rule, for {@code next} (its group has none running): once it has waited {@link
     * SchedulerConfig#quantumSteps()} steps since it was queued or preempted, the running sequence of no better priority
     * that has run longest since its admission, at least a quantum, gives up its slot (ties: the tenant with the most
     * running, then the latest to arrive). Its committed blocks stay in the prefix cache, so it resumes by recomputing
     * little more than its last partial block, and its sampler state is kept, so its tokens are those of an
     * uninterrupted run. Null when the quantum is off, {@code next} is younger than it, or no sequence has run a quantum.
     */
    private Sequence quantumVictim(Sequence next) {
        long q = config.quantumSteps();
        if (q <= 0 || step - next.since < q) {
            return null;
        }
        Sequence victim = null;
        long longest = 0;
        int mostTenant = 0;
        for (Sequence s : running) {
            if (s.priority() < next.priority() || s.inFlight >= 0 || s.isEmbedding()) {
                continue;
            }
            long ran = step - s.since;
            if (ran < q) {
                continue;
            }
            int t = runningOf(runningByTenant, s.tenant);
            if (victim == null || ran > longest || (ran == longest && (t > mostTenant
                    || (t == mostTenant && s.arrival > victim.arrival)))) {
                victim = s;
                longest = ran;
                mostTenant = t;
            }
        }
        return victim;
    }

    /**
     * {@code victim} gave up its slot to the time-slice rule: it and the waiting sequences of its group (the other
     * choices of its request) queue again from now, behind those that waited longer, the one it yields to among them.
     */
    private void yielded(Sequence victim) {
        victim.queued = step;
        for (Sequence s : waiting) {
            if (s.group == victim.group) {
                s.queued = step;
            }
        }
    }

    /** Of {@link #fairnessPreemptions()}, those of the time-slice rule (a quantum run out). */
    public long quantumPreemptions() {
        return quantumPreemptions;
    }

    /** Sequences preempted to give a waiting request its share. */
    public long fairnessPreemptions() {
        return fairnessPreemptions;
    }

    private Sequence worstUnscheduled() {
        for (int i = running.size() - 1; i >= 0; i--) {
            Sequence s = running.get(i);
            if (s.scheduledStep != step && s.inFlight < 0) { // never one a step in flight holds
                return s;
            }
        }
        throw new IllegalStateException("no running sequence left to preempt");
    }

    /** Sends a running sequence back to waiting, freeing its blocks; it is recomputed later. */
    private void preempt(Sequence seq) {
        running.remove(seq);
        countRunning(seq, -1);
        kv.free(seq.blocks);
        freeSlots[freeSlotCount++] = seq.slot;
        seq.slot = -1;
        seq.numComputed = 0;
        seq.pool = null; // an embedding pools again from position 0
        seq.state = Sequence.State.WAITING;
        seq.since = step;
        waiting.add(seq);
        preemptions++;
    }

    private void insertRunning(Sequence seq) {
        countRunning(seq, 1);
        int at = running.size();
        while (at > 0 && ORDER.compare(running.get(at - 1), seq) > 0) {
            at--;
        }
        running.add(at, seq);
    }

    /** Removes a sequence for good and frees what it holds. */
    private FinishedSequence release(Sequence seq, FinishReason reason, String message) {
        return release(seq, reason, message, new float[0]);
    }

    private FinishedSequence release(Sequence seq, FinishReason reason, String message, float[] embedding) {
        if (seq.state == Sequence.State.RUNNING) {
            running.remove(seq);
            countRunning(seq, -1);
            freeSlots[freeSlotCount++] = seq.slot;
            seq.slot = -1;
        }
        kv.free(seq.blocks);
        seq.state = Sequence.State.FINISHED;
        byId.remove(seq.id);
        return new FinishedSequence(seq.id, reason, seq.usage(), message, embedding);
    }
}
