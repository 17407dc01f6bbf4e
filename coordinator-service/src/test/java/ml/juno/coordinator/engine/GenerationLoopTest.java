package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.kvcache.KvCacheManager;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.Scheduler;
import ml.juno.coordinator.scheduler.SchedulerConfig;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import org.junit.jupiter.api.Test;

class GenerationLoopTest {
    private static final int V = 26;

    /**
     * TEST DOUBLE for a model: always predicts "previous token + 1" (mod V) with a clear margin, so greedy
     * output is known in advance; samples them as a real executor does. Can be told to fail, and counts its calls.
     */
    static final class SuccessorExecutor implements Executor {
        final AtomicInteger calls = new AtomicInteger();
        final SamplingStage sampling = new SamplingStage(V);
        volatile String failWith;
        volatile long stepNanos; // how long a step takes

        @Override
        public StepResult execute(StepPlan plan) {
            calls.incrementAndGet();
            if (stepNanos > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(stepNanos);
            }
            if (failWith != null) {
                throw new IllegalStateException(failWith);
            }
            float[] out = new float[plan.logitRowCount() * V];
            int r = 0;
            for (var row : plan.rows()) {
                if (row.needsLogits()) {
                    int last = row.chunk().tokenIds()[row.tokenCount() - 1];
                    out[r * V + (last + 1) % V] = 5f;
                    r++;
                }
            }
            return sampling.sample(plan, out, plan.logitRowCount());
        }
    }

    /** TEST DOUBLE for a tokenizer's streaming decoder: token i is the letter 'a' + i. */
    static final class LetterDecoder implements PieceDecoder {
        @Override
        public String decode(int tokenId) {
            return String.valueOf((char) ('a' + tokenId));
        }

        @Override
        public String flush() {
            return "";
        }
    }

    /** Records everything a request receives, on the request's output thread. */
    static final class RecordingSink implements GenerationListener {
        final List<Integer> tokens = new ArrayList<>();
        final StringBuilder text = new StringBuilder();
        final CountDownLatch done = new CountDownLatch(1);
        final CountDownLatch threw = new CountDownLatch(1);
        volatile FinishReason reason;
        volatile Usage usage;
        volatile String message;
        volatile int failOnToken = -1;
        final CountDownLatch reachedGate = new CountDownLatch(1);
        volatile CountDownLatch gate; // when set, the listener blocks at its 5th token until opened (a slow client)

        static void await(CountDownLatch latch) {
            try {
                assertTrue(latch.await(10, TimeUnit.SECONDS), "timed out");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void onToken(int choice, int tokenId, String piece, TokenLogprobs logprobs) {
            if (tokens.size() == failOnToken) {
                threw.countDown();
                throw new IllegalStateException("client hung up");
            }
            tokens.add(tokenId);
            text.append(piece);
            if (gate != null && tokens.size() == 5) {
                reachedGate.countDown();
                await(gate);
            }
        }

        @Override
        public void onText(int choice, String piece) {
            text.append(piece);
        }

        @Override
        public void onChoiceFinished(int choice, FinishReason reason, Usage usage, String message) {
            if (done.getCount() == 0) {
                throw new AssertionError("finished twice");
            }
            this.reason = reason;
            this.usage = usage;
            this.message = message;
            done.countDown();
        }

        /** Waits for the finish (the text is processed on the request's own thread). */
        RecordingSink finished() {
            await(done);
            return this;
        }
    }

    private final SuccessorExecutor executor = new SuccessorExecutor();
    private final KvCacheManager kv = new KvCacheManager(new KvCacheConfig(4, 64));
    private final GenerationLoop loop = new GenerationLoop(
            new Scheduler(new SchedulerConfig(32, 8, 16, 256, Duration.ofSeconds(1)), kv, V), executor);

    private RecordingSink submit(int[] prompt, StopCondition stop) {
        return submit(new RecordingSink(), prompt, stop);
    }

    private RecordingSink submit(RecordingSink sink, int[] prompt, StopCondition stop) {
        output(sink, prompt, stop);
        return sink;
    }

    private RequestOutput output(RecordingSink sink, int[] prompt, StopCondition stop) {
        RequestOutput out = new RequestOutput(loop, LetterDecoder::new, sink, RequestMetrics.NONE, () -> false);
        var r = out.submit(List.of(GenerationRequest.of(prompt, SamplingParams.greedy(), stop)));
        assertInstanceOf(SubmitResult.Accepted.class, r);
        return out;
    }

    private void drain() {
        for (int i = 0; i < 200 && loop.runOnce(); i++) {
            // step
        }
    }

    /** Steps until {@code latch} opens (the request's thread has caught up), one step at a time. */
    private void stepUntil(CountDownLatch latch) throws InterruptedException {
        for (int i = 0; i < 500 && !latch.await(10, TimeUnit.MILLISECONDS); i++) {
            loop.runOnce();
        }
        assertEquals(0, latch.getCount(), "never reached");
    }

    @Test
    void loop_streamsTokensAndTextThenFinishesAtMaxTokens() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, StopCondition.of(4));
        drain();
        sink.finished();
        assertEquals(List.of(3, 4, 5, 6), sink.tokens);
        assertEquals("defg", sink.text.toString());
        assertEquals(FinishReason.LENGTH, sink.reason);
        assertEquals(new Usage(3, 4, 0), sink.usage);
        assertEquals(0, loop.activeCount());
        assertEquals(0, kv.stats().blocks().used());
    }

    @Test
    void stopString_acrossTokensEndsTheRequestAndIsNeverStreamed() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, new StopCondition(10, 0, new int[0], List.of("ef")));
        drain();
        sink.finished();
        assertEquals("d", sink.text.toString());
        assertEquals(FinishReason.STOP, sink.reason);
        assertEquals(3, sink.usage.completionTokens(), "d, e, f were generated");
        assertEquals(0, kv.stats().blocks().used());
    }

    @Test
    void stopStringOnTheLastAllowedToken_reportsStop() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, new StopCondition(3, 0, new int[0], List.of("f")));
        drain();
        sink.finished();
        assertEquals("de", sink.text.toString());
        assertEquals(FinishReason.STOP, sink.reason);
    }

    @Test
    void heldBackTail_isReleasedWhenTheRequestEndsOtherwise() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, new StopCondition(4, 0, new int[0], List.of("gz")));
        drain();
        sink.finished();
        assertEquals("defg", sink.text.toString(), "g was held back, then released at the end");
        assertEquals(FinishReason.LENGTH, sink.reason);
    }

    @Test
    void endOfGenerationToken_finishesWithStopAndIsNotStreamed() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, StopCondition.of(10, 5));
        drain();
        sink.finished();
        assertEquals(List.of(3, 4), sink.tokens);
        assertEquals(FinishReason.STOP, sink.reason);
    }

    @Test
    void executorFailure_finishesWithErrorAndMessage() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, StopCondition.of(10));
        loop.runOnce();
        executor.failWith = "node 1 gone";
        drain();
        sink.finished();
        assertEquals(FinishReason.ERROR, sink.reason);
        assertTrue(sink.message.contains("node 1 gone"), sink.message);
        assertEquals(0, kv.stats().blocks().used());
    }

    @Test
    void listenerThatThrows_getsItsRequestCancelled() throws Exception {
        RecordingSink sink = new RecordingSink();
        sink.failOnToken = 2;
        RequestOutput out = output(sink, new int[] {0, 1, 2}, StopCondition.of(200));
        RecordingSink other = submit(new int[] {5}, StopCondition.of(6));
        stepUntil(sink.threw);
        // the request's own thread cancels it after the listener threw: wait for that before stepping on (on a loaded
        // machine the 200 tokens were once all generated before the cancel landed)
        for (int i = 0; i < 1000 && !out.isCancelled(); i++) {
            Thread.sleep(10);
        }
        assertTrue(out.isCancelled(), "the throwing listener's request was cancelled");
        Thread.sleep(100); // isCancelled is set just before the loop is told, on that same thread
        drain();
        sink.finished();
        other.finished();
        assertEquals(FinishReason.CANCELLED, sink.reason);
        assertEquals(List.of(3, 4), sink.tokens);
        assertEquals(FinishReason.LENGTH, other.reason, "other requests are unaffected");
        assertEquals(0, kv.stats().blocks().used());
    }

    @Test
    void startedLoop_servesConcurrentRequestsAndCancelsFromAnotherThread() throws Exception {
        executor.stepNanos = 2_000_000; // 2 ms a step: the cancel lands long before the slow request's 200 tokens
        loop.start();
        try {
            List<RecordingSink> sinks = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                sinks.add(submit(new int[] {i, i + 1}, StopCondition.of(8)));
            }
            RecordingSink slow = new RecordingSink();
            CountDownLatch gate = new CountDownLatch(1);
            slow.gate = gate;
            RequestOutput slowRequest = output(slow, new int[] {1}, StopCondition.of(200));
            assertTrue(slow.reachedGate.await(10, TimeUnit.SECONDS));
            for (RecordingSink s : sinks) { // while the slow client reads nothing, the others run to their end
                assertTrue(s.done.await(10, TimeUnit.SECONDS));
                assertEquals(FinishReason.LENGTH, s.reason);
                assertEquals(8, s.tokens.size());
            }
            assertEquals(1, slow.done.getCount(), "the slow client is still reading");
            assertTrue(loop.cancel(slowRequest.sequenceId(0)), "cancelled from another thread while its client is blocked");
            gate.countDown();
            slow.finished();
            assertEquals(FinishReason.CANCELLED, slow.reason);
            // idle now: the thread waits without spinning
            int calls = executor.calls.get();
            Thread.sleep(50);
            assertEquals(calls, executor.calls.get());
            RecordingSink late = submit(new int[] {7}, StopCondition.of(2));
            assertTrue(late.done.await(10, TimeUnit.SECONDS), "a submission wakes the idle loop");
        } finally {
            loop.close();
        }
        assertEquals(0, kv.stats().blocks().used());
    }

    @Test
    void slowClient_doesNotSlowTheStepsOfOtherRequests() throws Exception {
        loop.start();
        try {
            RecordingSink slow = new RecordingSink();
            CountDownLatch gate = new CountDownLatch(1);
            slow.gate = gate; // reads nothing after its 5th token until the gate opens
            submit(slow, new int[] {2}, StopCondition.of(30));
            assertTrue(slow.reachedGate.await(10, TimeUnit.SECONDS));
            RecordingSink fast = submit(new int[] {3, 4}, StopCondition.of(40));
            assertTrue(fast.done.await(10, TimeUnit.SECONDS), "the fast request ends while the slow client is blocked");
            assertEquals(40, fast.tokens.size());
            assertEquals(FinishReason.LENGTH, fast.reason);
            assertEquals(5, slow.tokens.size(), "the slow client has read only what it read");
            gate.countDown();
            slow.finished();
            assertEquals(30, slow.tokens.size(), "nothing was lost while it was slow");
            assertEquals(FinishReason.LENGTH, slow.reason);
        } finally {
            loop.close();
        }
    }

    @Test
    void close_cancelsWhatIsStillQueuedOrRunningAndFreesItsBlocks() {
        RecordingSink running = submit(new int[] {0, 1, 2}, StopCondition.of(50));
        loop.runOnce();
        RecordingSink queued = submit(new int[] {3}, StopCondition.of(50));
        loop.close();
        running.finished();
        queued.finished();
        assertEquals(FinishReason.CANCELLED, running.reason);
        assertEquals(1, running.usage.completionTokens());
        assertEquals(FinishReason.CANCELLED, queued.reason);
        assertEquals(0, loop.activeCount());
        assertEquals(0, kv.stats().blocks().used());
    }
}
