package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import ml.juno.coordinator.engine.GenerationLoopTest.LetterDecoder;
import ml.juno.coordinator.engine.GenerationLoopTest.RecordingSink;
import ml.juno.coordinator.engine.GenerationLoopTest.SuccessorExecutor;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.kvcache.KvCacheManager;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.Scheduler;
import ml.juno.coordinator.scheduler.SchedulerConfig;
import ml.juno.coordinator.scheduler.SubmitResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A request's deadline ({@link RequestOutput#deadline}): a generation still running when it passes is stopped, its
 * choices finish with {@code error} and a message {@link RequestOutput#timedOut} recognises, and its sequence and KV
 * blocks are freed; one still waiting in the queue likewise; one that ends in time is untouched.
 */
class RequestDeadlineTest {
    private static final int V = 26;

    private final SuccessorExecutor executor = new SuccessorExecutor();
    private final KvCacheManager kv = new KvCacheManager(new KvCacheConfig(4, 256));
    private final GenerationLoop loop = new GenerationLoop(
            new Scheduler(new SchedulerConfig(32, 1, 16, 1000, Duration.ofSeconds(1)), kv, V), executor);

    @AfterEach
    void close() {
        loop.close();
    }

    private RequestOutput submit(RecordingSink sink, int maxTokens, Duration limit, int n) {
        RequestOutput out = new RequestOutput(loop, LetterDecoder::new, sink, RequestMetrics.NONE, () -> false)
                .deadline(limit, System.nanoTime());
        GenerationRequest r = GenerationRequest.of(new int[] {0, 1, 2}, SamplingParams.greedy(), StopCondition.of(maxTokens));
        assertInstanceOf(SubmitResult.Accepted.class, out.submit(java.util.Collections.nCopies(n, r)));
        return out;
    }

    private void awaitIdle() throws InterruptedException {
        for (int i = 0; i < 500 && (loop.activeCount() > 0 || kv.stats().blocks().used() > 0); i++) {
            Thread.sleep(10);
        }
        assertEquals(0, loop.activeCount(), "no sequence left");
        assertEquals(0, kv.stats().blocks().used(), "no KV block left");
    }

    @Test
    void aGenerationPastItsDeadline_isStoppedWithATimeoutError_andFreesItsMemory() throws Exception {
        executor.stepNanos = 5_000_000; // 5 ms a step: 900 tokens would take 4.5 s
        loop.start();
        RecordingSink sink = new RecordingSink();
        long t0 = System.nanoTime();
        submit(sink, 900, Duration.ofMillis(300), 1);
        sink.finished();
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(FinishReason.ERROR, sink.reason);
        assertTrue(RequestOutput.timedOut(sink.message), sink.message);
        assertTrue(sink.message.contains("300 ms"), sink.message);
        assertTrue(ms >= 290 && ms < 3000, "stopped at its deadline, not at its end: " + ms + " ms");
        assertTrue(sink.tokens.size() > 0 && sink.tokens.size() < 900, "it was generating: " + sink.tokens.size());
        awaitIdle();
    }

    @Test
    void aRequestWaitingInTheQueue_timesOutThere() throws Exception {
        executor.stepNanos = 5_000_000;
        loop.start();
        RecordingSink first = new RecordingSink();
        submit(first, 600, null, 1); // holds the one slot for about 3 s, no deadline
        RecordingSink queued = new RecordingSink();
        submit(queued, 10, Duration.ofMillis(200), 1);
        queued.finished();
        assertEquals(FinishReason.ERROR, queued.reason);
        assertTrue(RequestOutput.timedOut(queued.message), queued.message);
        assertTrue(queued.tokens.isEmpty(), "it never ran");
        assertFalse(first.done.getCount() == 0, "the running request is not touched");
        first.finished();
        assertEquals(FinishReason.LENGTH, first.reason);
        assertEquals(600, first.tokens.size());
        awaitIdle();
    }

    @Test
    void aRequestDoneInTime_isUntouched() throws Exception {
        executor.stepNanos = 1_000_000;
        loop.start();
        RecordingSink quick = new RecordingSink();
        submit(quick, 5, Duration.ofSeconds(30), 1);
        quick.finished();
        assertEquals(FinishReason.LENGTH, quick.reason);
        assertFalse(RequestOutput.timedOut(quick.message));
        assertEquals(List.of(3, 4, 5, 6, 7), quick.tokens);
        awaitIdle();
        assertFalse(RequestOutput.timedOut("node 1 gone"), "other errors are not timeouts");
    }
}
