package ml.juno.coordinator.scheduler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.LogitBias;
import ml.juno.coordinator.sampling.RepetitionPenalties;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.Truncation;
import org.junit.jupiter.api.Test;

class SchedulerTest {
    private static final int V = 32;
    private static final SamplingParams GREEDY = SamplingParams.greedy();

    private static ScheduledRow rowOf(StepPlan plan, long id) {
        return plan.rows().stream().filter(r -> r.sequenceId() == id).findFirst()
                .orElseThrow(() -> new AssertionError("no row for " + id + " in " + plan));
    }

    private static boolean has(StepPlan plan, long id) {
        return plan.rows().stream().anyMatch(r -> r.sequenceId() == id);
    }

    @Test
    void prompt_isPrefilledInOneRowThenDecodedOneTokenPerStep() {
        Harness h = Harness.small();
        int[] prompt = {3, 1, 4, 1, 5};
        long id = h.submit(prompt, GREEDY, StopCondition.of(3), 0);
        StepPlan first = h.step();
        ScheduledRow r = rowOf(first, id);
        assertEquals(0, r.chunk().startPosition());
        assertArrayEquals(prompt, r.chunk().tokenIds());
        assertTrue(r.needsLogits());
        assertEquals(2, r.kv().blockTable().length, "5 tokens in blocks of 4");
        assertEquals(1, h.tokens.get(id).size());

        StepPlan second = h.step();
        ScheduledRow d = rowOf(second, id);
        assertEquals(5, d.chunk().startPosition());
        assertArrayEquals(new int[] {h.tokens.get(id).get(0)}, d.chunk().tokenIds(), "feeds the sampled token");
        h.step();
        assertEquals(FinishReason.LENGTH, h.finished.get(id).reason());
        assertEquals(new Usage(5, 3, 0), h.finished.get(id).usage());
        assertEquals(0, h.kv.stats().blocks().used());
    }

    @Test
    void longPrompt_isChunkedUnderTheBudgetWhileRunningSequencesKeepDecoding() {
        Harness h = new Harness(V, 10, 8, 64, new KvCacheConfig(4, 128));
        long a = h.submit(Harness.prompt(1, 4, V), GREEDY, StopCondition.of(50), 0);
        long b = h.submit(Harness.prompt(2, 4, V), GREEDY, StopCondition.of(50), 0);
        h.step(); // both prompts: 8 tokens
        long big = h.submit(Harness.prompt(3, 100, V), GREEDY, StopCondition.of(5), -10); // best priority
        int prefilled = 0;
        int steps = 0;
        while (h.tokens.get(big).isEmpty()) {
            StepPlan plan = h.step();
            steps++;
            assertEquals(1, rowOf(plan, a).tokenCount(), "decode row every step");
            assertEquals(1, rowOf(plan, b).tokenCount());
            assertEquals(plan.rows().get(0).sequenceId(), a, "decode rows come first");
            ScheduledRow chunk = rowOf(plan, big);
            assertEquals(prefilled, chunk.chunk().startPosition());
            assertTrue(chunk.tokenCount() <= 8);
            prefilled += chunk.tokenCount();
            assertEquals(prefilled == 100, chunk.needsLogits(), "logits only on the last chunk");
        }
        assertEquals(13, steps, "100 tokens at 8 per step");
        assertEquals(2 + steps - 0, h.tokens.get(a).size() + 1, "a decoded one token per step");
    }

    @Test
    void waitingQueue_admitsLowerPriorityValueFirstThenArrivalOrder() {
        Harness h = new Harness(V, 16, 1, 64, new KvCacheConfig(4, 64));
        long late = h.submit(Harness.prompt(1, 3, V), GREEDY, StopCondition.of(1), 5);
        long urgent1 = h.submit(Harness.prompt(2, 3, V), GREEDY, StopCondition.of(1), 1);
        long urgent2 = h.submit(Harness.prompt(3, 3, V), GREEDY, StopCondition.of(1), 1);
        assertTrue(has(h.step(), urgent1));
        assertTrue(has(h.step(), urgent2));
        assertTrue(has(h.step(), late));
        assertFalse(h.scheduler.hasWork());
    }

    @Test
    void fullQueue_rejectsWithRetryAfter() {
        Harness h = new Harness(V, 16, 2, 2, new KvCacheConfig(4, 64));
        h.submit(Harness.prompt(1, 3, V), GREEDY, StopCondition.of(1), 0);
        h.submit(Harness.prompt(2, 3, V), GREEDY, StopCondition.of(1), 0);
        var r = h.scheduler.submit(GenerationRequest.of(Harness.prompt(3, 3, V), GREEDY, StopCondition.of(1)));
        var rejected = assertInstanceOf(SubmitResult.Rejected.class, r);
        assertEquals(Duration.ofSeconds(4), rejected.retryAfter(), "2 s for each batch ahead: 2 waiting over 2 slots is 2 batches");
        h.step(); // both admitted: room again
        assertInstanceOf(SubmitResult.Accepted.class,
                h.scheduler.submit(GenerationRequest.of(Harness.prompt(3, 3, V), GREEDY, StopCondition.of(1))));
    }

    @Test
    void submit_rejectsRequestsThatCanNeverRun() {
        Harness h = Harness.small();
        assertThrows(IllegalArgumentException.class, () -> h.scheduler.submit(
                GenerationRequest.of(new int[] {V}, GREEDY, StopCondition.of(1))));
        assertThrows(IllegalArgumentException.class, () -> h.scheduler.submit(
                GenerationRequest.of(new int[] {1}, GREEDY, StopCondition.of(1_000))));
        assertThrows(IllegalArgumentException.class, () -> new GenerationRequest(new int[0], GREEDY,
                StopCondition.of(1), 0, -1));
    }

    @Test
    void cancel_waitingLeavesAtOnceAndRunningFreesBlocksAtNextStep() {
        Harness h = new Harness(V, 16, 1, 64, new KvCacheConfig(4, 64));
        long running = h.submit(Harness.prompt(1, 6, V), GREEDY, StopCondition.of(100), 0);
        long queued = h.submit(Harness.prompt(2, 6, V), GREEDY, StopCondition.of(100), 0);
        h.step();
        assertTrue(h.kv.stats().blocks().used() > 0);
        assertTrue(h.scheduler.cancel(queued));
        assertTrue(h.scheduler.cancel(running));
        assertFalse(h.scheduler.cancel(running), "already cancelled");
        StepPlan next = h.step();
        assertFalse(has(next, running));
        assertEquals(FinishReason.CANCELLED, h.finished.get(queued).reason());
        assertEquals(FinishReason.CANCELLED, h.finished.get(running).reason());
        assertEquals(0, h.kv.stats().blocks().used());
        assertFalse(h.scheduler.hasWork());
        assertFalse(h.scheduler.cancel(12345), "unknown id");
    }

    @Test
    void cancel_betweenScheduleAndUpdate_dropsTheRowsResult() {
        Harness h = Harness.small();
        long id = h.submit(Harness.prompt(1, 5, V), GREEDY, StopCondition.of(10), 0);
        StepPlan plan = h.scheduler.schedule();
        h.scheduler.cancel(id);
        StepOutcome out = h.scheduler.update(plan, h.execute(plan));
        assertTrue(out.tokens().isEmpty());
        h.step();
        assertEquals(FinishReason.CANCELLED, h.finished.get(id).reason());
        assertEquals(0, h.kv.stats().blocks().used());
    }

    @Test
    void stopToken_finishesWithStopAndIsNotStreamed() {
        Harness h = Harness.small();
        // the first greedy token of this prompt becomes the stop token
        long probe = h.submit(Harness.prompt(4, 5, V), GREEDY, StopCondition.of(1), 0);
        h.step();
        int first = h.tokens.get(probe).get(0);
        long id = h.submit(Harness.prompt(4, 5, V), GREEDY, StopCondition.of(10, first), 0);
        h.step();
        assertEquals(FinishReason.STOP, h.finished.get(id).reason());
        assertTrue(h.tokens.get(id).isEmpty());
        assertEquals(1, h.finished.get(id).usage().completionTokens());
    }

    @Test
    void minTokens_masksStopTokensUntilReached() {
        Harness h = Harness.small();
        long probe = h.submit(Harness.prompt(4, 5, V), GREEDY, StopCondition.of(1), 0);
        h.step();
        int first = h.tokens.get(probe).get(0);
        long id = h.submit(Harness.prompt(4, 5, V), GREEDY, new StopCondition(6, 3, new int[] {first}, List.of()), 0);
        h.runToEnd(50);
        List<Integer> got = h.tokens.get(id);
        assertTrue(got.size() >= 3, "at least min tokens: " + got);
        for (int i = 0; i < 3; i++) {
            assertTrue(got.get(i) != first, "stop token masked before min tokens");
        }
    }

    @Test
    void engineFailure_finishesEveryRowWithErrorAndFreesBlocks() {
        Harness h = Harness.small();
        long a = h.submit(Harness.prompt(1, 5, V), GREEDY, StopCondition.of(10), 0);
        long b = h.submit(Harness.prompt(2, 9, V), GREEDY, StopCondition.of(10), 0);
        StepPlan plan = h.scheduler.schedule();
        StepOutcome out = h.scheduler.update(plan, new StepResult.Failure("node 2 unreachable"));
        assertEquals(2, out.finished().size());
        for (FinishedSequence f : out.finished()) {
            assertEquals(FinishReason.ERROR, f.reason());
            assertEquals("node 2 unreachable", f.message());
        }
        assertTrue(out.finished().stream().anyMatch(f -> f.sequenceId() == a));
        assertTrue(out.finished().stream().anyMatch(f -> f.sequenceId() == b));
        assertEquals(0, h.kv.stats().blocks().used());
        // a malformed answer is an error too
        long c = h.submit(Harness.prompt(3, 5, V), GREEDY, StopCondition.of(10), 0);
        StepPlan p2 = h.scheduler.schedule();
        StepOutcome o2 = h.scheduler.update(p2, StepResult.empty());
        assertEquals(FinishReason.ERROR, o2.finished().get(0).reason());
        assertEquals(c, o2.finished().get(0).sequenceId());
    }

    @Test
    void repeatedPrompt_skipsTheCachedPrefixAndReportsIt() {
        Harness h = Harness.small();
        int[] prompt = Harness.prompt(9, 14, V);
        long a = h.submit(prompt, GREEDY, StopCondition.of(4), 0);
        h.runToEnd(20);
        long b = h.submit(prompt, GREEDY, StopCondition.of(4), 0);
        StepPlan plan = h.step();
        assertEquals(12, rowOf(plan, b).chunk().startPosition(), "3 full blocks of 4 come from the cache");
        h.runToEnd(20);
        assertEquals(h.tokens.get(a), h.tokens.get(b), "same prompt, same greedy output");
        assertEquals(12, h.finished.get(b).usage().cachedTokens());
        assertEquals(12, h.kv.stats().prefix().hitTokens());
    }

    @Test
    void extendedPrompt_reusesPromptAndGeneratedBlocksOfAnEarlierRequest() {
        Harness h = Harness.small();
        int[] prompt = Harness.prompt(5, 6, V);
        long a = h.submit(prompt, GREEDY, StopCondition.of(6), 0);
        h.runToEnd(20);
        // the follow-up turn: previous prompt + previous answer + new text
        int[] next = new int[6 + 6 + 3];
        System.arraycopy(prompt, 0, next, 0, 6);
        for (int i = 0; i < 6; i++) {
            next[6 + i] = h.tokens.get(a).get(i);
        }
        next[12] = 1;
        next[13] = 2;
        next[14] = 3;
        long b = h.submit(next, GREEDY, StopCondition.of(2), 0);
        StepPlan plan = h.step();
        // the last generated token was never fed back, so positions 0..10 hold KV: 2 full blocks
        assertEquals(8, rowOf(plan, b).chunk().startPosition());
        h.runToEnd(20);
    }

    @Test
    void kvPressure_preemptsTheWorstSequenceWhichLaterResumesWithTheSameOutput() {
        // reference: plenty of blocks
        Harness roomy = new Harness(V, 32, 4, 64, new KvCacheConfig(4, 256));
        Harness tight = new Harness(V, 32, 4, 64, new KvCacheConfig(4, 14));
        long[] ids = new long[4];
        long[] ref = new long[4];
        for (int i = 0; i < 4; i++) {
            ids[i] = tight.submit(Harness.prompt(20 + i, 6, V), GREEDY, StopCondition.of(12), i);
            ref[i] = roomy.submit(Harness.prompt(20 + i, 6, V), GREEDY, StopCondition.of(12), i);
        }
        tight.runToEnd(500);
        roomy.runToEnd(500);
        assertTrue(tight.scheduler.preemptions() > 0, "the tight pool had to preempt");
        for (int i = 0; i < 4; i++) {
            assertEquals(roomy.tokens.get(ref[i]), tight.tokens.get(ids[i]), "sequence " + i);
            assertEquals(FinishReason.LENGTH, tight.finished.get(ids[i]).reason());
        }
        assertEquals(0, tight.kv.stats().blocks().used());
    }

    @Test
    void seededSampling_givesTheSameOutputAloneOrInABusyBatch() {
        SamplingParams sampled = new SamplingParams(1.1f, new Truncation(12, 0.9f, 0.02f),
                new RepetitionPenalties(1.1f, 0.1f, 0.1f, 16), LogitBias.NONE, 77);
        Harness alone = Harness.small();
        alone.engine.peaked = false;
        long solo = alone.submit(Harness.prompt(3, 7, V), sampled, StopCondition.of(20), 0);
        alone.runToEnd(100);

        Harness busy = Harness.small();
        busy.engine.peaked = false;
        for (int i = 0; i < 5; i++) {
            busy.submit(Harness.prompt(40 + i, 3 + i, V), new SamplingParams(0.7f, Truncation.NONE,
                    RepetitionPenalties.NONE, LogitBias.NONE, i), StopCondition.of(15 + i), 0);
        }
        busy.step();
        long mine = busy.submit(Harness.prompt(3, 7, V), sampled, StopCondition.of(20), 0);
        busy.runToEnd(100);
        assertEquals(alone.tokens.get(solo), busy.tokens.get(mine));
        assertEquals(20, busy.tokens.get(mine).size());
    }

    @Test
    void logprobs_areReportedWhenAsked() {
        Harness h = Harness.small();
        long id = h.submit(new GenerationRequest(Harness.prompt(1, 4, V), GREEDY, StopCondition.of(2), 0, 3));
        StepPlan plan = h.scheduler.schedule();
        StepOutcome out = h.scheduler.update(plan, h.execute(plan));
        SampledToken t = out.tokens().get(0);
        assertEquals(id, t.sequenceId());
        assertTrue(t.hasLogprobs());
        assertEquals(t.tokenId(), t.logprobs().topIds()[0], "greedy picks the most likely token");
        assertEquals(3, t.logprobs().topIds().length);
        assertTrue(t.logprobs().logprob() < 0f);
    }

    @Test
    void maxRunning_capsTheBatchAndSlotsAreReused() {
        Harness h = new Harness(V, 64, 2, 64, new KvCacheConfig(4, 64));
        for (int i = 0; i < 5; i++) {
            h.submit(Harness.prompt(i, 3, V), GREEDY, StopCondition.of(2), 0);
        }
        while (h.scheduler.hasWork()) {
            StepPlan p = h.step();
            assertTrue(p.rows().size() <= 2);
            for (ScheduledRow r : p.rows()) {
                assertTrue(r.slot() == 0 || r.slot() == 1, "slot " + r.slot());
            }
        }
        assertEquals(5, h.finished.size());
    }

    @Test
    void runningSequencesPrefix_isSharedWithANewRequestAndCountedTwice() {
        Harness h = Harness.small();
        int[] prompt = Harness.prompt(11, 10, V);
        long a = h.submit(prompt, GREEDY, StopCondition.of(30), 0);
        h.step();
        long b = h.submit(prompt, GREEDY, StopCondition.of(3), 0);
        StepPlan plan = h.step();
        ScheduledRow rowA = rowOf(plan, a);
        ScheduledRow rowB = rowOf(plan, b);
        assertEquals(8, rowB.chunk().startPosition(), "two full blocks shared with the running sequence");
        assertEquals(rowA.kv().blockTable()[0], rowB.kv().blockTable()[0]);
        assertEquals(rowA.kv().blockTable()[1], rowB.kv().blockTable()[1]);
        assertTrue(rowA.kv().blockTable()[2] != rowB.kv().blockTable()[2], "the partial block is private");
        assertEquals(2, h.kv.refCount(rowA.kv().blockTable()[0]));
        h.runToEnd(100);
        assertEquals(h.tokens.get(a).subList(0, 3), h.tokens.get(b), "same prompt, same greedy start");
        assertEquals(0, h.kv.refCount(rowA.kv().blockTable()[0]));
    }

    @Test
    void identicalPromptsInOneStep_bothComputeAndTheDuplicateBlocksStayPrivate() {
        Harness h = Harness.small();
        int[] prompt = Harness.prompt(12, 9, V);
        long a = h.submit(prompt, GREEDY, StopCondition.of(2), 0);
        long b = h.submit(prompt, GREEDY, StopCondition.of(2), 0);
        StepPlan plan = h.step();
        assertEquals(0, rowOf(plan, a).chunk().startPosition());
        assertEquals(0, rowOf(plan, b).chunk().startPosition(), "nothing was committed yet to share");
        h.runToEnd(20);
        assertEquals(h.tokens.get(a), h.tokens.get(b));
        var blocks = h.kv.stats().blocks();
        assertEquals(0, blocks.used());
        assertEquals(2, blocks.cached(), "one registered copy of each full block; duplicates went back to free");
        long c = h.submit(prompt, GREEDY, StopCondition.of(2), 0);
        assertEquals(8, rowOf(h.step(), c).chunk().startPosition());
    }

    @Test
    void prefixCachingOff_recomputesRepeatedPromptsFromTheStart() {
        Harness h = new Harness(V, 16, 8, 64, new KvCacheConfig(4, 64, false));
        int[] prompt = Harness.prompt(9, 14, V);
        long a = h.submit(prompt, GREEDY, StopCondition.of(4), 0);
        h.runToEnd(20);
        long b = h.submit(prompt, GREEDY, StopCondition.of(4), 0);
        assertEquals(0, rowOf(h.step(), b).chunk().startPosition());
        h.runToEnd(20);
        assertEquals(h.tokens.get(a), h.tokens.get(b));
        assertEquals(0, h.finished.get(b).usage().cachedTokens());
    }
}
