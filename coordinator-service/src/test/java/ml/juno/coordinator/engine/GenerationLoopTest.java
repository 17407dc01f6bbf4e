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

        @Override
        public StepResult execute(StepPlan plan) {
            calls.incrementAndGet();
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

    /** Records everything a request receives. */
    static final class RecordingSink implements TokenSink {
        final List<Integer> tokens = new ArrayList<>();
        final StringBuilder text = new StringBuilder();
        final CountDownLatch done = new CountDownLatch(1);
        volatile FinishReason reason;
        volatile Usage usage;
        volatile String message;
        volatile int failOnToken = -1;
        final CountDownLatch reachedGate = new CountDownLatch(1);
        volatile CountDownLatch gate; // when set, the sink holds the loop at its 5th token until opened

        void await(CountDownLatch latch) {
            try {
                latch.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public void onToken(int tokenId, String piece, TokenLogprobs logprobs) {
            if (tokens.size() == failOnToken) {
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
        public void onText(String piece) {
            text.append(piece);
        }

        @Override
        public void onFinish(FinishReason reason, Usage usage, String message) {
            if (done.getCount() == 0) {
                throw new AssertionError("finished twice");
            }
            this.reason = reason;
            this.usage = usage;
            this.message = message;
            done.countDown();
        }
    }

    private final SuccessorExecutor executor = new SuccessorExecutor();
    private final KvCacheManager kv = new KvCacheManager(new KvCacheConfig(4, 64));
    private final GenerationLoop loop = new GenerationLoop(
            new Scheduler(new SchedulerConfig(32, 8, 16, 256, Duration.ofSeconds(1)), kv, V), executor);

    private RecordingSink submit(int[] prompt, StopCondition stop) {
        RecordingSink sink = new RecordingSink();
        var r = loop.submit(GenerationRequest.of(prompt, SamplingParams.greedy(), stop), new LetterDecoder(), sink);
        assertInstanceOf(SubmitResult.Accepted.class, r);
        return sink;
    }

    private void drain() {
        for (int i = 0; i < 200 && loop.runOnce(); i++) {
            // step
        }
    }

    @Test
    void loop_streamsTokensAndTextThenFinishesAtMaxTokens() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, StopCondition.of(4));
        drain();
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
        assertEquals("d", sink.text.toString());
        assertEquals(FinishReason.STOP, sink.reason);
        assertEquals(3, sink.usage.completionTokens(), "d, e, f were generated");
        assertEquals(0, kv.stats().blocks().used());
    }

    @Test
    void stopStringOnTheLastAllowedToken_reportsStop() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, new StopCondition(3, 0, new int[0], List.of("f")));
        drain();
        assertEquals("de", sink.text.toString());
        assertEquals(FinishReason.STOP, sink.reason);
    }

    @Test
    void heldBackTail_isReleasedWhenTheRequestEndsOtherwise() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, new StopCondition(4, 0, new int[0], List.of("gz")));
        drain();
        assertEquals("defg", sink.text.toString(), "g was held back, then released at the end");
        assertEquals(FinishReason.LENGTH, sink.reason);
    }

    @Test
    void endOfGenerationToken_finishesWithStopAndIsNotStreamed() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, StopCondition.of(10, 5));
        drain();
        assertEquals(List.of(3, 4), sink.tokens);
        assertEquals(FinishReason.STOP, sink.reason);
    }

    @Test
    void executorFailure_finishesWithErrorAndMessage() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, StopCondition.of(10));
        loop.runOnce();
        executor.failWith = "node 1 gone";
        drain();
        assertEquals(FinishReason.ERROR, sink.reason);
        assertTrue(sink.message.contains("node 1 gone"), sink.message);
        assertEquals(0, kv.stats().blocks().used());
    }

    @Test
    void sinkThatThrows_getsItsRequestCancelled() {
        RecordingSink sink = submit(new int[] {0, 1, 2}, StopCondition.of(10));
        sink.failOnToken = 2;
        RecordingSink other = submit(new int[] {5}, StopCondition.of(6));
        drain();
        assertEquals(FinishReason.CANCELLED, sink.reason);
        assertEquals(List.of(3, 4), sink.tokens);
        assertEquals(FinishReason.LENGTH, other.reason, "other requests are unaffected");
        assertEquals(0, kv.stats().blocks().used());
    }

    @Test
    void startedLoop_servesConcurrentRequestsAndCancelsFromAnotherThread() throws Exception {
        loop.start();
        try {
            List<RecordingSink> sinks = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                sinks.add(submit(new int[] {i, i + 1}, StopCondition.of(8)));
            }
            RecordingSink endless = new RecordingSink();
            CountDownLatch gate = new CountDownLatch(1);
            endless.gate = gate;
            var accepted = (SubmitResult.Accepted) loop.submit(GenerationRequest.of(new int[] {1},
                    SamplingParams.greedy(), StopCondition.of(200)), new LetterDecoder(), endless);
            assertTrue(endless.reachedGate.await(10, TimeUnit.SECONDS));
            assertTrue(loop.cancel(accepted.sequenceId()), "cancelled while the loop is busy delivering");
            gate.countDown();
            for (RecordingSink s : sinks) {
                assertTrue(s.done.await(10, TimeUnit.SECONDS));
                assertEquals(FinishReason.LENGTH, s.reason);
                assertEquals(8, s.tokens.size());
            }
            assertTrue(endless.done.await(10, TimeUnit.SECONDS));
            assertEquals(FinishReason.CANCELLED, endless.reason);
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
    void close_cancelsWhatIsStillQueuedOrRunningAndFreesItsBlocks() {
        RecordingSink running = submit(new int[] {0, 1, 2}, StopCondition.of(50));
        loop.runOnce();
        RecordingSink queued = submit(new int[] {3}, StopCondition.of(50));
        loop.close();
        assertEquals(FinishReason.CANCELLED, running.reason);
        assertEquals(1, running.usage.completionTokens());
        assertEquals(FinishReason.CANCELLED, queued.reason);
        assertEquals(0, loop.activeCount());
        assertEquals(0, kv.stats().blocks().used());
    }
}
