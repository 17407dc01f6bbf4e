package ml.juno.coordinator.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import ml.juno.coordinator.jfr.SchedulerStepEvent;
import ml.juno.coordinator.jfr.TokenProducedEvent;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.scheduler.EmbeddingRequest;
import ml.juno.coordinator.scheduler.FinishedSequence;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.PromptScores;
import ml.juno.coordinator.scheduler.SampledToken;
import ml.juno.coordinator.scheduler.ScheduledRow;
import ml.juno.coordinator.scheduler.Scheduler;
import ml.juno.coordinator.scheduler.StepOutcome;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.coordinator.scheduler.SubmitResult;

/**
 * The one inference thread: schedule → execute → update, then hand each sequence's token ids and finish to its
 * {@link TokenEvents} (a request's {@link RequestOutput}, which turns them into text on its own thread). The loop moves
 * tokens and formats nothing.
 *
 * <p>With an executor that keeps several steps in flight (a pipeline: {@link Executor#stepsInFlight()} = its stages),
 * the loop begins a step of the sequences no step in flight holds while earlier steps are still in the stages, up to
 * that many, and applies each step's update as it finishes, in the order begun. A sequence is in one step at a time,
 * so its tokens are the ones one step at a time gives (seeded draws included); the scheduler never preempts, and
 * releases (cancelled) no sequence a step in flight holds.
 *
 * <p>{@link #submit} and {@link #cancel} may be called from any thread; they take the scheduler's lock
 * briefly. The executor runs outside the lock, so submissions never wait for a forward pass. Tests
 * drive the loop step by step with {@link #runOnce()}; production calls {@link #start()}.
 */
public final class GenerationLoop implements AutoCloseable {

    /** A sequence in flight: where its events go, and what the JFR token event reports. */
    private static final class Active {
        final TokenEvents events;
        final long submittedNanos = System.nanoTime();
        int generated;

        Active(TokenEvents events) {
            this.events = events;
        }
    }

    /** A step begun and not finished yet: its plan, the KV epoch it was planned in, its start, its JFR event. */
    private record InFlight(StepPlan plan, long epoch, long startNanos, SchedulerStepEvent event) {}

    private final Scheduler scheduler;
    private final Executor executor;
    /** Steps kept in flight at most ({@link Executor#stepsInFlight()}); 1: schedule → execute → update, one at a time. */
    private final int depth;
    /** The steps begun and not finished, oldest first (the loop's thread, or the caller of {@link #runOnce}, only). */
    private final java.util.ArrayDeque<InFlight> inFlight = new java.util.ArrayDeque<>();
    private volatile int mostInFlight;
    private final Object lock = new Object();
    private final Map<Long, Active> active = new ConcurrentHashMap<>();
    private volatile boolean running;
    private volatile Thread thread;
    private long seenEpoch;

    public GenerationLoop(Scheduler scheduler, Executor executor) {
        this.scheduler = scheduler;
        this.executor = executor;
        this.depth = Math.max(1, executor.stepsInFlight());
        this.seenEpoch = kvEpoch();
    }

    /** Steps this loop keeps in flight at most (1 unless the executor is a pipeline). */
    public int depth() {
        return depth;
    }

    /** The most steps that were in flight at once so far. */
    public int mostInFlight() {
        return mostInFlight;
    }

    /**
     * Queues a sequence; its tokens and finish go to {@code events}.
     *
     * @throws IllegalArgumentException if the request can never run
     */
    public SubmitResult submit(GenerationRequest request, TokenEvents events) {
        return submit(request, events, null);
    }

    /**
     * As {@link #submit(GenerationRequest, TokenEvents)} for {@code tenant} (the caller's API key name; null: none): the
     * scheduler shares steps fairly between tenants first, then between requests.
     */
    public SubmitResult submit(GenerationRequest request, TokenEvents events, Object tenant) {
        synchronized (lock) {
            SubmitResult result = scheduler.submit(request, events, tenant); // the choices of one request share their fair share
            if (result instanceof SubmitResult.Accepted a) {
                active.put(a.sequenceId(), new Active(events));
                lock.notifyAll();
            }
            return result;
        }
    }

    /**
     * Queues an input to embed as a sequence of {@code group} (the inputs of one API request share it); its finish, with
     * the vector, goes to {@code events} (no tokens). {@code admitted}: an earlier input of the request is queued, so
     * this one is not held to the queue bound.
     *
     * @throws IllegalArgumentException if the input can never run
     */
    public SubmitResult submitEmbedding(EmbeddingRequest request, Object group, boolean admitted, TokenEvents events) {
        return submitEmbedding(request, group, null, admitted, events);
    }

    /** As {@link #submitEmbedding(EmbeddingRequest, Object, boolean, TokenEvents)} for {@code tenant} (null: none). */
    public SubmitResult submitEmbedding(EmbeddingRequest request, Object group, Object tenant, boolean admitted, TokenEvents events) {
        synchronized (lock) {
            SubmitResult result = scheduler.submitEmbedding(request, group, tenant, admitted);
            if (result instanceof SubmitResult.Accepted a) {
                active.put(a.sequenceId(), new Active(events));
                lock.notifyAll();
            }
            return result;
        }
    }

    /** Cancels a sequence at any point; its events then get {@code onFinished(CANCELLED)}. */
    public boolean cancel(long sequenceId) {
        return end(sequenceId, FinishReason.CANCELLED);
    }

    /**
     * Ends a sequence because its text reached a stop string: the same path as {@link #cancel}, but it finishes with
     * {@code stop}.
     */
    public boolean stop(long sequenceId) {
        return end(sequenceId, FinishReason.STOP);
    }

    private boolean end(long sequenceId, FinishReason reason) {
        synchronized (lock) {
            boolean ended = scheduler.cancel(sequenceId, reason);
            lock.notifyAll();
            return ended;
        }
    }

    /**
     * Reads the scheduler (and its KV bookkeeping) under the loop's lock, from any thread, e.g. for statistics. {@code
     * reader} must be quick and must not change anything.
     */
    public <T> T inspect(Function<Scheduler, T> reader) {
        synchronized (lock) {
            return reader.apply(scheduler);
        }
    }

    /** True between {@link #start()} and {@link #close()} while the inference thread lives. */
    public boolean isRunning() {
        Thread t = thread;
        return running && t != null && t.isAlive();
    }

    /** Requests still in flight (queued or running). */
    public int activeCount() {
        return active.size();
    }

    /**
     * One iteration: schedule, execute (unless the plan is empty), update, deliver. With steps in flight ({@link
     * #depth()} above 1): begin steps of sequences not in flight until {@code depth} are, then finish the oldest and
     * apply its update.
     *
     * @return false when there was nothing to do
     */
    public boolean runOnce() {
        return depth > 1 ? runPipelined() : runSerial();
    }

    /**
     * The pipelined iteration. Each step is planned from the sequences no step in flight holds, with at most its share
     * of the running sequences ({@code ceil(running / depth)}), so that the next step has others to run; the executor
     * finishes steps in the order they were begun and each step's update is applied as it finishes, so every sequence
     * sees exactly the steps, and the tokens, it would see one step at a time. A finished step's sequences get their
     * next step before its tokens go to their listeners.
     */
    private boolean runPipelined() {
        boolean worked = beginSteps();
        InFlight f = inFlight.pollFirst();
        if (f == null) {
            return worked;
        }
        StepResult result = checked(f.plan(), finish(f.plan()), f.epoch());
        long stepNanos = System.nanoTime() - f.startNanos();
        StepOutcome outcome = update(f.plan(), result);
        // the freed sequences' next step goes to the first stage before their tokens are handed on: the stage waits for
        // the scheduler's update only, not for the listeners (on a cluster, each wakes a request's output thread)
        beginSteps();
        report(f.plan(), result, outcome, stepNanos, f.event());
        return true;
    }

    /**
     * Begins steps of the sequences no step in flight holds until {@link #depth} are in flight, or none can run.
     *
     * @return whether it did anything (began a step, or delivered the finishes of cancelled sequences)
     */
    private boolean beginSteps() {
        boolean worked = false;
        while (inFlight.size() < depth) {
            SchedulerStepEvent event = SchedulerStepEvent.startIfEnabled();
            StepPlan plan;
            StepOutcome flushed = null;
            long epoch = kvEpoch();
            synchronized (lock) {
                if (!scheduler.hasIdleWork()) {
                    break;
                }
                if (epoch != seenEpoch) {
                    scheduler.kvCache().forgetPrefixes();
                    seenEpoch = epoch;
                }
                int share = Math.max(1, (scheduler.runningCount() + depth - 1) / depth);
                plan = scheduler.schedule(share);
                if (plan.isEmpty()) {
                    flushed = scheduler.update(plan, StepResult.empty()); // finishes of cancelled sequences, if any
                }
            }
            worked = true;
            if (flushed != null) {
                deliver(flushed);
                if (event != null) {
                    finishEvent(event, plan, 0);
                }
                break; // nothing else can run until a step in flight finishes (or new work arrives)
            }
            long t0 = System.nanoTime();
            begin(plan);
            inFlight.addLast(new InFlight(plan, epoch, t0, event));
            if (inFlight.size() > mostInFlight) {
                mostInFlight = inFlight.size();
            }
        }
        return worked;
    }

    private boolean runSerial() {
        SchedulerStepEvent event = SchedulerStepEvent.startIfEnabled(); // null unless a JFR recording wants it
        StepPlan plan;
        long epoch = kvEpoch();
        synchronized (lock) {
            if (!scheduler.hasWork()) {
                return false;
            }
            if (epoch != seenEpoch) {
                scheduler.kvCache().forgetPrefixes(); // KV memory behind cached prefixes may be gone (a node restarted)
                seenEpoch = epoch;
            }
            plan = scheduler.schedule();
        }
        long t0 = System.nanoTime();
        if (!plan.isEmpty() && mostInFlight == 0) {
            mostInFlight = 1;
        }
        StepResult result = plan.isEmpty() ? StepResult.empty() : execute(plan);
        complete(plan, result, epoch, System.nanoTime() - t0, event);
        return true;
    }

    /** A step's result, applied: the KV-epoch check, the update, the delivery, the trace and the JFR event. */
    private void complete(StepPlan plan, StepResult result, long epoch, long stepNanos, SchedulerStepEvent event) {
        StepResult r = checked(plan, result, epoch);
        report(plan, r, update(plan, r), stepNanos, event);
    }

    /** A step's result, or a failure when a node went down since the step was planned (the KV epoch moved). */
    private StepResult checked(StepPlan plan, StepResult result, long epoch) {
        if (kvEpoch() != epoch && !plan.isEmpty()) {
            // a node went down while this step was planned or ran: its rows may have read lost KV, never trust them
            // (a step that failed already keeps its own reason too, which names the node)
            return new StepResult.Failure("step " + plan.stepId() + ": a node went down during the step"
                    + (result instanceof StepResult.Failure f ? " (" + f.message() + ")" : ""));
        }
        return result;
    }

    /** The scheduler's update for a step's result: what to deliver. */
    private StepOutcome update(StepPlan plan, StepResult result) {
        synchronized (lock) {
            return scheduler.update(plan, result);
        }
    }

    /** An applied step's delivery to its listeners, its trace line and its JFR event. */
    private void report(StepPlan plan, StepResult result, StepOutcome outcome, long stepNanos, SchedulerStepEvent event) {
        deliver(outcome);
        if (TRACE.isLoggable(System.Logger.Level.TRACE) && !plan.isEmpty()) {
            trace(plan, result, stepNanos, outcome.tokens().size());
        }
        if (event != null) {
            finishEvent(event, plan, outcome.tokens().size());
        }
    }

    /** {@code --verbose}: one line per step, the plan and its time. */
    private static void trace(StepPlan plan, StepResult result, long nanos, int produced) {
        int prefill = 0;
        int decode = 0;
        StringBuilder rows = new StringBuilder();
        for (ScheduledRow r : plan.rows()) {
            if (r.tokenCount() == 1) {
                decode++;
            } else {
                prefill += r.tokenCount();
            }
            if (rows.length() < 200) {
                rows.append(rows.isEmpty() ? "" : " ").append("seq").append(r.sequenceId()).append('@').append(r.chunk().startPosition())
                        .append('+').append(r.tokenCount());
            }
        }
        TRACE.log(System.Logger.Level.TRACE, String.format(java.util.Locale.ROOT, "step %d: %d rows (%d prefill tokens, %d decode) [%s] in %.2f ms, %d tokens%s",
                plan.stepId(), plan.rows().size(), prefill, decode, rows, nanos / 1e6, produced,
                result instanceof StepResult.Failure f ? ", FAILED: " + f.message() : ""));
    }

    private static final System.Logger TRACE = System.getLogger(GenerationLoop.class.getName());

    private static void finishEvent(SchedulerStepEvent event, StepPlan plan, int produced) {
        int prefill = 0;
        int decode = 0;
        for (ScheduledRow r : plan.rows()) {
            if (r.tokenCount() == 1) {
                decode++;
            } else {
                prefill += r.tokenCount();
            }
        }
        event.finish(plan.stepId(), plan.rows().size(), prefill, decode, produced);
    }

    private long kvEpoch() {
        return executor.kvEpoch();
    }

    private StepResult execute(StepPlan plan) {
        try {
            StepResult r = executor.execute(plan);
            return r != null ? r : new StepResult.Failure("executor returned no result");
        } catch (RuntimeException e) {
            return new StepResult.Failure("step " + plan.stepId() + " failed: " + e);
        }
    }

    private void begin(StepPlan plan) {
        try {
            executor.begin(plan);
        } catch (RuntimeException e) {
            failedBegin.put(plan, new StepResult.Failure("step " + plan.stepId() + " failed: " + e));
        }
    }

    /** Steps whose {@link Executor#begin} threw (a broken executor): their {@link #finish} is that failure. */
    private final Map<StepPlan, StepResult> failedBegin = new java.util.IdentityHashMap<>();

    private StepResult finish(StepPlan plan) {
        StepResult failed = failedBegin.remove(plan);
        if (failed != null) {
            return failed;
        }
        try {
            StepResult r = executor.finish(plan);
            return r != null ? r : new StepResult.Failure("executor returned no result");
        } catch (RuntimeException e) {
            return new StepResult.Failure("step " + plan.stepId() + " failed: " + e);
        }
    }

    /** Finishes every step still in flight and applies its update (the loop is stopping). */
    private void drain() {
        for (InFlight f; (f = inFlight.pollFirst()) != null; ) {
            complete(f.plan(), finish(f.plan()), f.epoch(), System.nanoTime() - f.startNanos(), f.event());
        }
    }

    private void deliver(StepOutcome outcome) {
        for (PromptScores s : outcome.scores()) {
            Active a = active.get(s.sequenceId());
            if (a != null) {
                try {
                    a.events.onPromptScores(s);
                } catch (RuntimeException e) {
                    cancel(s.sequenceId());
                }
            }
        }
        for (SampledToken t : outcome.tokens()) {
            Active a = active.get(t.sequenceId());
            if (a == null) {
                continue;
            }
            a.generated++;
            if (TokenProducedEvent.enabled()) {
                TokenProducedEvent.emit(t.sequenceId(), t.tokenId(), a.generated, System.nanoTime() - a.submittedNanos);
            }
            try {
                a.events.onToken(t);
            } catch (RuntimeException e) {
                cancel(t.sequenceId()); // the request's output is broken: nobody hears the rest
            }
        }
        for (FinishedSequence f : outcome.finished()) {
            finish(f);
        }
    }

    private void finish(FinishedSequence f) {
        Active a = active.remove(f.sequenceId());
        if (a != null) {
            try {
                a.events.onFinished(f);
            } catch (RuntimeException ignored) {
                // the sequence is over either way; nothing left to clean up
            }
        }
    }

    /** Starts the inference thread (a platform thread: it runs the engine's hot loop). */
    public synchronized void start() {
        if (thread != null) {
            throw new IllegalStateException("already started");
        }
        running = true;
        thread = Thread.ofPlatform().name("juno-inference").daemon(true).start(this::loop);
    }

    private void loop() {
        try {
            steps();
        } finally {
            drain(); // steps still in the pipeline finish before close() cancels what is left
        }
    }

    private void steps() {
        while (running) {
            if (!runOnce()) {
                synchronized (lock) {
                    while (running && !scheduler.hasWork()) {
                        try {
                            lock.wait();
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            return;
                        }
                    }
                }
            }
        }
    }

    /**
     * Stops the thread after the step in flight, then ends every request still queued or running with
     * {@code cancelled} and releases its blocks.
     */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            t = thread;
            running = false;
        }
        synchronized (lock) {
            lock.notifyAll();
        }
        if (t != null) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            drain(); // driven by runOnce: its steps in flight end here
        }
        for (Long id : active.keySet()) {
            FinishedSequence f;
            synchronized (lock) {
                try {
                    f = scheduler.finish(id, FinishReason.CANCELLED);
                } catch (IllegalArgumentException alreadyEnded) {
                    // cancelled while waiting just before the loop stopped: its finish was never delivered
                    f = new FinishedSequence(id, FinishReason.CANCELLED, new ml.juno.coordinator.scheduler.Usage(0, 0, 0), "");
                }
            }
            finish(f);
        }
    }
}
