package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.kvcache.KvCacheManager;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.scheduler.FinishedSequence;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.SampledToken;
import ml.juno.coordinator.scheduler.ScheduledRow;
import ml.juno.coordinator.scheduler.Scheduler;
import ml.juno.coordinator.scheduler.SchedulerConfig;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.coordinator.scheduler.SubmitResult;
import org.junit.jupiter.api.Test;

/**
 * The generation loop with steps in flight, against a fake two-stage pipeline whose stages each take a fixed time: steps
 * of disjoint sequences overlap in the stages, and every sequence gets the tokens (seeded draws) the one-step-at-a-time
 * loop gives it; cancellation, a failing step and closing with steps in flight leave no block behind.
 */
class GenerationLoopPipelineTest {
    private static final int V = 29;

    /**
     * TEST DOUBLE for a pipeline of {@code stages} stages: each stage is a thread of its own that holds a step for {@code
     * stageNanos}, so stage 1 computes step k while stage 0 computes step k + 1, as the cluster's stages do. The logits are
     * a fixed function of a row's last token and position, spread enough for seeded draws to differ from greedy; the
     * draw happens in {@link #finish}, in the order steps were begun, as the cluster's last stage answers. Records
     * when each stage held which step, and fails every step that holds {@link #failSequence}.
     */
    static final class FakePipeline implements Executor {
        final int stages;
        final long stageNanos;
        final int depth;
        final SamplingStage sampling = new SamplingStage(V);
        final List<ExecutorService> threads = new ArrayList<>();
        final ArrayDeque<Map.Entry<StepPlan, CompletableFuture<StepPlan>>> pending = new ArrayDeque<>();
        /** [stage, step, start, end] of every stage's work. */
        final List<long[]> spans = java.util.Collections.synchronizedList(new ArrayList<>());
        final Set<Long> inFlight = ConcurrentHashMap.newKeySet();
        volatile String twice; // a sequence begun while a step in flight held it
        volatile long failSequence = -1;
        volatile int begun;

        FakePipeline(int stages, long stageNanos, int depth) {
            this.stages = stages;
            this.stageNanos = stageNanos;
            this.depth = depth;
            for (int i = 0; i < stages; i++) {
                threads.add(Executors.newSingleThreadExecutor());
            }
        }

        @Override
        public int stepsInFlight() {
            return depth;
        }

        @Override
        public StepResult execute(StepPlan plan) {
            begin(plan);
            return finish(plan);
        }

        @Override
        public void begin(StepPlan plan) {
            begun++;
            for (ScheduledRow r : plan.rows()) {
                if (!inFlight.add(r.sequenceId())) {
                    twice = "sequence " + r.sequenceId() + " in step " + plan.stepId() + " while another step holds it";
                }
            }
            CompletableFuture<StepPlan> f = CompletableFuture.completedFuture(plan);
            for (int s = 0; s < stages; s++) {
                int stage = s;
                f = f.thenApplyAsync(p -> {
                    long t0 = System.nanoTime();
                    LockSupport.parkNanos(stageNanos);
                    spans.add(new long[] {stage, p.stepId(), t0, System.nanoTime()});
                    return p;
                }, threads.get(s));
            }
            pending.addLast(Map.entry(plan, f));
        }

        @Override
        public StepResult finish(StepPlan plan) {
            var e = pending.pollFirst();
            assertTrue(e != null && e.getKey() == plan, "finished in the order begun");
            e.getValue().join();
            for (ScheduledRow r : plan.rows()) {
                inFlight.remove(r.sequenceId());
            }
            for (ScheduledRow r : plan.rows()) {
                if (r.sequenceId() == failSequence) {
                    throw new IllegalStateException("stage 1 lost step " + plan.stepId());
                }
            }
            float[] logits = new float[plan.logitRowCount() * V];
            int k = 0;
            for (ScheduledRow r : plan.rows()) {
                if (r.needsLogits()) {
                    int last = r.chunk().tokenIds()[r.tokenCount() - 1];
                    int pos = r.chunk().startPosition() + r.tokenCount() - 1;
                    for (int v = 0; v < V; v++) {
                        logits[k * V + v] = (float) Math.sin(0.37 * v * (last + 1) + 0.11 * pos) * 2f;
                    }
                    k++;
                }
            }
            return sampling.sample(plan, logits, plan.logitRowCount());
        }

        /** Pairs of spans where stage 0 worked on one step while stage 1 worked on another. */
        int overlaps() {
            int n = 0;
            List<long[]> all;
            synchronized (spans) {
                all = new ArrayList<>(spans);
            }
            for (long[] a : all) {
                for (long[] b : all) {
                    if (a[0] == 0 && b[0] == 1 && a[1] != b[1] && a[2] < b[3] && b[2] < a[3]) {
                        n++;
                    }
                }
            }
            return n;
        }

        void close() {
            threads.forEach(ExecutorService::shutdownNow);
        }
    }

    /** One sequence's events. */
    static class Recorder implements TokenEvents {
        final List<Integer> tokens = new ArrayList<>();
        final CountDownLatch done = new CountDownLatch(1);
        volatile FinishedSequence finished;

        @Override
        public void onToken(SampledToken token) {
            tokens.add(token.tokenId());
        }

        @Override
        public void onFinished(FinishedSequence f) {
            assertEquals(1, done.getCount(), "finished once");
            finished = f;
            done.countDown();
        }

        Recorder await() throws InterruptedException {
            assertTrue(done.await(30, TimeUnit.SECONDS), "finished");
            return this;
        }
    }

    /** A loop over a fake two-stage pipeline two steps deep, 0.2 ms a stage, with a small KV cache; closes both. */
    record SmallLoop(KvCacheManager kv, FakePipeline pipe, GenerationLoop loop) implements AutoCloseable {
        static SmallLoop start() {
            KvCacheManager kv = new KvCacheManager(new KvCacheConfig(4, 64));
            Scheduler scheduler = new Scheduler(new SchedulerConfig(32, 4, 8, 64, Duration.ofSeconds(1)), kv, V);
            FakePipeline pipe = new FakePipeline(2, 200_000, 2);
            return new SmallLoop(kv, pipe, new GenerationLoop(scheduler, pipe));
        }

        @Override
        public void close() {
            loop.close();
            pipe.close();
        }
    }

    record Run(List<List<Integer>> tokens, List<FinishReason> reasons, long millis, int mostInFlight, int overlaps,
               long blocksUsed) {}

    static final int REQUESTS = 8;
    static final int TOKENS = 12;

    static GenerationRequest request(int i) {
        int[] prompt = {1 + i % 5, 2 + i, 3, 4 + i % 3};
        SamplingParams p = i % 4 == 3 ? SamplingParams.greedy() : SamplingParams.defaults(100 + i);
        return GenerationRequest.of(prompt, p, StopCondition.of(TOKENS));
    }

    /** {@link #REQUESTS} requests at once through a loop over a fake {@code depth}-deep pipeline; their tokens. */
    static Run run(int depth) throws Exception {
        KvCacheManager kv = new KvCacheManager(new KvCacheConfig(4, 128));
        Scheduler scheduler = new Scheduler(new SchedulerConfig(64, REQUESTS, 16, 64, Duration.ofSeconds(1)), kv, V);
        FakePipeline pipe = new FakePipeline(2, 3_000_000, depth);
        GenerationLoop loop = new GenerationLoop(scheduler, pipe);
        assertEquals(depth, loop.depth());
        List<Recorder> recs = new ArrayList<>();
        try {
            long t0 = System.nanoTime();
            for (int i = 0; i < REQUESTS; i++) {
                Recorder r = new Recorder();
                assertInstanceOf(SubmitResult.Accepted.class, loop.submit(request(i), r));
                recs.add(r);
            }
            loop.start();
            for (Recorder r : recs) {
                r.await();
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(null, pipe.twice, "a sequence is never in two steps at once");
            return new Run(recs.stream().map(r -> List.copyOf(r.tokens)).toList(), recs.stream().map(r -> r.finished.reason()).toList(),
                    ms, loop.mostInFlight(), pipe.overlaps(), kv.stats().blocks().used());
        } finally {
            loop.close();
            pipe.close();
        }
    }

    @Test
    void twoStepsInFlight_overlapInTheStages_andGiveTheSerialLoopsTokens() throws Exception {
        Run serial = run(1);
        Run pipelined = run(2);
        assertEquals(1, serial.mostInFlight());
        assertEquals(0, serial.overlaps(), "one step at a time: the stages take turns");
        assertEquals(2, pipelined.mostInFlight(), "two steps were in flight at once");
        assertTrue(pipelined.overlaps() > TOKENS / 2, "stage 0 computed a step while stage 1 computed another, again and again: "
                + pipelined.overlaps());
        assertEquals(serial.tokens(), pipelined.tokens(), "every sequence's seeded and greedy tokens, token for token");
        assertEquals(List.of(FinishReason.LENGTH), serial.reasons().stream().distinct().toList());
        assertEquals(serial.reasons(), pipelined.reasons());
        for (List<Integer> t : pipelined.tokens()) {
            assertEquals(TOKENS, t.size());
        }
        assertNotEquals(serial.tokens().get(0), serial.tokens().get(1), "the seeds draw different tokens");
        assertEquals(0, serial.blocksUsed());
        assertEquals(0, pipelined.blocksUsed());
        System.out.printf("[pipelined loop] fake 2-stage pipeline, %d x %d tokens: one step at a time %d ms, two in flight %d ms (%d overlaps)%n",
                REQUESTS, TOKENS, serial.millis(), pipelined.millis(), pipelined.overlaps());
    }

    @Test
    void aSequencesNextStep_beginsBeforeItsTokenIsDelivered() throws Exception {
        try (SmallLoop t = SmallLoop.start()) {
            KvCacheManager kv = t.kv();
            FakePipeline pipe = t.pipe();
            GenerationLoop loop = t.loop();
            List<Recorder> recs = new ArrayList<>();
            List<String> late = new ArrayList<>(); // runOnce delivers on this thread
            for (int i = 0; i < 4; i++) {
                long[] id = {-1};
                Recorder r = new Recorder() {
                    @Override
                    public void onToken(SampledToken token) {
                        super.onToken(token);
                        // every token but a sequence's last: the stages already hold the sequence's next step
                        if (tokens.size() < TOKENS && !pipe.inFlight.contains(id[0])) {
                            late.add("sequence " + id[0] + " token " + tokens.size());
                        }
                    }
                };
                id[0] = ((SubmitResult.Accepted) loop.submit(request(i), r)).sequenceId();
                recs.add(r);
            }
            for (int i = 0; i < 200 && loop.runOnce(); i++) {
                // step
            }
            for (Recorder r : recs) {
                assertEquals(FinishReason.LENGTH, r.await().finished.reason());
                assertEquals(TOKENS, r.tokens.size());
            }
            assertEquals(2, loop.mostInFlight());
            assertEquals(List.of(), late, "tokens handed on while their sequence's next step had not begun");
            assertEquals(0, kv.stats().blocks().used());
        }
    }

    @Test
    void singleSequence_staysOneStepAtATime() throws Exception {
        try (SmallLoop t = SmallLoop.start()) {
            FakePipeline pipe = t.pipe();
            GenerationLoop loop = t.loop();
            Recorder r = new Recorder();
            loop.submit(request(0), r);
            for (int i = 0; i < 100 && loop.runOnce(); i++) {
                // step
            }
            r.await();
            assertEquals(TOKENS, r.tokens.size());
            assertEquals(1, loop.mostInFlight(), "nothing else to run: one step in flight");
            assertEquals(TOKENS, pipe.begun, "the prompt's step, then one per token but the last's");
        }
    }

    @Test
    void cancelWhileItsStepIsInFlight_finishesCancelled_othersRunOn_andNoBlockIsLeft() throws Exception {
        try (SmallLoop t = SmallLoop.start()) {
            KvCacheManager kv = t.kv();
            FakePipeline pipe = t.pipe();
            GenerationLoop loop = t.loop();
            List<Recorder> recs = new ArrayList<>();
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Recorder r = new Recorder();
                ids.add(((SubmitResult.Accepted) loop.submit(request(i), r)).sequenceId());
                recs.add(r);
            }
            for (int i = 0; i < 4; i++) {
                loop.runOnce();
            }
            // sequence 0 is held by a step in flight now or the next runOnce begins one for it
            assertTrue(loop.cancel(ids.get(0)));
            for (int i = 0; i < 200 && loop.runOnce(); i++) {
                // step
            }
            assertEquals(FinishReason.CANCELLED, recs.get(0).await().finished.reason());
            assertTrue(recs.get(0).tokens.size() < TOKENS, "cancelled before its end: " + recs.get(0).tokens);
            for (int i = 1; i < 4; i++) {
                assertEquals(FinishReason.LENGTH, recs.get(i).await().finished.reason());
                assertEquals(TOKENS, recs.get(i).tokens.size());
            }
            assertEquals(0, kv.stats().blocks().used());
            assertEquals(null, pipe.twice);
        }
    }

    @Test
    void failingStep_failsItsOwnSequences_notTheOtherStepsInFlight() throws Exception {
        try (SmallLoop t = SmallLoop.start()) {
            KvCacheManager kv = t.kv();
            FakePipeline pipe = t.pipe();
            GenerationLoop loop = t.loop();
            List<Recorder> recs = new ArrayList<>();
            List<Long> ids = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Recorder r = new Recorder();
                ids.add(((SubmitResult.Accepted) loop.submit(request(i), r)).sequenceId());
                recs.add(r);
            }
            for (int i = 0; i < 6; i++) {
                loop.runOnce(); // prefill, then decode steps of two sequences each
            }
            assertEquals(2, loop.mostInFlight());
            pipe.failSequence = ids.get(3);
            for (int i = 0; i < 200 && loop.runOnce(); i++) {
                // step
            }
            Set<Long> failed = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                FinishedSequence f = recs.get(i).await().finished;
                if (f.reason() == FinishReason.ERROR) {
                    assertTrue(f.message().contains("stage 1 lost step"), f.message());
                    failed.add(ids.get(i));
                } else {
                    assertEquals(FinishReason.LENGTH, f.reason());
                    assertEquals(TOKENS, recs.get(i).tokens.size());
                }
            }
            assertTrue(failed.contains(ids.get(3)), "the failing step's sequence failed");
            assertTrue(failed.size() < 4, "the sequences of the other step in flight ran to their end: " + failed);
            assertEquals(0, kv.stats().blocks().used());
        }
    }

    @Test
    void closeWithStepsInFlight_finishesThemAndCancelsEverything() throws Exception {
        KvCacheManager kv = new KvCacheManager(new KvCacheConfig(4, 64));
        Scheduler scheduler = new Scheduler(new SchedulerConfig(32, 4, 8, 64, Duration.ofSeconds(1)), kv, V);
        FakePipeline pipe = new FakePipeline(2, 200_000, 2);
        GenerationLoop loop = new GenerationLoop(scheduler, pipe);
        List<Recorder> recs = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Recorder r = new Recorder();
            loop.submit(new GenerationRequest(new int[] {1, 2, 3}, SamplingParams.defaults(i), StopCondition.of(40), 0, -1), r);
            recs.add(r);
        }
        for (int i = 0; i < 5; i++) {
            loop.runOnce();
        }
        loop.close();
        for (Recorder r : recs) {
            assertEquals(FinishReason.CANCELLED, r.await().finished.reason());
        }
        assertTrue(pipe.pending.isEmpty(), "every step begun was finished");
        assertEquals(0, kv.stats().blocks().used());
        assertFalse(loop.isRunning());
        pipe.close();
    }
}
