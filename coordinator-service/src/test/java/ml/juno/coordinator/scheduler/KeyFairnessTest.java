package ml.juno.coordinator.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import org.junit.jupiter.api.Test;

/**
 * Fairness between API keys (tenants), on top of fairness between requests: one key's many small requests, or its one
 * long prompt, cannot keep another key from its first token; within one key requests still share as before; every
 * sequence still gets exactly the fake engine's tokens and the KV pool ends empty.
 */
class KeyFairnessTest {

    private static GenerationRequest request(int seed, int promptLength, int maxTokens) {
        return new GenerationRequest(Harness.prompt(seed, promptLength, 32), SamplingParams.greedy(), StopCondition.of(maxTokens), 0, -1);
    }

    private static long submit(Harness h, GenerationRequest r, Object group, Object tenant) {
        var result = h.scheduler.submit(r, group, tenant);
        if (!(result instanceof SubmitResult.Accepted a)) {
            throw new AssertionError("rejected: " + result);
        }
        h.engine.expect(a.sequenceId(), r.promptTokens(), r.stop().maxTokens());
        h.tokens.put(a.sequenceId(), new ArrayList<>());
        return a.sequenceId();
    }

    private static int stepsToFirstToken(Harness h, long id, int bound) {
        int steps = 0;
        while (h.tokens.get(id).isEmpty()) {
            h.step();
            steps++;
            assertTrue(steps <= bound, "no first token after " + steps + " steps");
        }
        return steps;
    }

    @Test
    void manySingleRequestsOfOneKey_doNotStarveAnotherKeysFirstToken() {
        // 16 requests of n=1 and 300 tokens from key a: every group holds one slot, so fairness between requests alone
        // (a victim group needs two running) would let key b wait until one of them ended, 300 steps later
        Harness h = new Harness(32, 64, 8, 256, new KvCacheConfig(4, 4096));
        List<Long> a = new ArrayList<>();
        for (int r = 0; r < 16; r++) {
            a.add(submit(h, request(r, 6, 300), new Object(), "a"));
        }
        for (int i = 0; i < 10; i++) {
            h.step();
        }
        assertEquals(8, h.scheduler.runningCount(), "key a holds every slot");
        long b = submit(h, request(99, 6, 5), new Object(), "b");
        int steps = stepsToFirstToken(h, b, 2);
        assertTrue(steps <= 2);
        assertTrue(h.scheduler.fairnessPreemptions() >= 1, "a slot of key a was given to key b");
        // a second request of b, while b has one running and a still holds seven: it gets a slot too (7 >= 1 + 2)
        long b2 = submit(h, request(98, 6, 5), new Object(), "b");
        stepsToFirstToken(h, b2, 2);
        h.runToEnd(100_000);
        for (long id : a) {
            assertEquals(300, h.tokens.get(id).size(), "sequence " + id + " (recomputed after its preemption)");
        }
        assertEquals(5, h.tokens.get(b).size());
        assertEquals(5, h.tokens.get(b2).size());
        assertEquals(0, h.kv.stats().blocks().used());
    }

    @Test
    void withoutKeys_manySingleRequestsKeepTheirSlots_asBefore() {
        // the same load with no tenants given: one shared tenant, per-request fairness only (no victim group of two)
        Harness h = new Harness(32, 64, 8, 256, new KvCacheConfig(4, 4096));
        for (int r = 0; r < 8; r++) {
            h.submit(request(r, 6, 50), new Object());
        }
        for (int i = 0; i < 5; i++) {
            h.step();
        }
        long small = h.submit(request(99, 6, 5), new Object());
        for (int i = 0; i < 10; i++) {
            h.step();
        }
        assertEquals(0, h.scheduler.fairnessPreemptions(), "no request holds two slots: nobody is preempted");
        assertTrue(h.tokens.get(small).isEmpty(), "it waits for a slot, as requests of one key do");
        h.runToEnd(100_000);
        assertEquals(5, h.tokens.get(small).size());
    }

    @Test
    void hugeRequestsOfOneKey_leaveAnotherKeyItsShareOfSlots() {
        // four n=8 requests of key a fill all 8 slots (2 each); key b's one request gets its first token within two
        // steps, and b, with one running, is preferred over a's waiting choices when a slot frees
        Harness h = new Harness(32, 64, 8, 256, new KvCacheConfig(4, 4096));
        List<Long> a = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            Object group = new Object();
            for (int c = 0; c < 8; c++) {
                a.add(submit(h, request(10 * r + c, 6, 200), group, "a"));
            }
        }
        for (int i = 0; i < 20; i++) {
            h.step();
        }
        Object bGroup = new Object();
        List<Long> b = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            b.add(submit(h, request(90 + c, 6, 40), bGroup, "b"));
        }
        stepsToFirstToken(h, b.getFirst(), 2);
        h.runToEnd(100_000);
        for (long id : a) {
            assertEquals(200, h.tokens.get(id).size());
        }
        for (long id : b) {
            assertEquals(40, h.tokens.get(id).size());
        }
        assertEquals(0, h.kv.stats().blocks().used());
    }

    @Test
    void aLongPromptOfOneKey_sharesTheStepBudget_withAnotherKeysShortPrompt() {
        // key a's 2,000-token prompt would take 32 steps of 64 tokens each; key b's 8-token prompt arriving during it
        // gets its first token in the next step, and a keeps computing its prompt meanwhile (the rest of the budget)
        Harness h = new Harness(32, 64, 8, 256, new KvCacheConfig(4, 4096));
        long a = submit(h, request(1, 2000, 4), new Object(), "a");
        for (int i = 0; i < 3; i++) {
            h.step();
        }
        long b = submit(h, request(2, 8, 4), new Object(), "b");
        StepPlan plan = h.step();
        assertEquals(1, h.tokens.get(b).size(), "b's whole prompt ran in the first step after it came: " + plan.rows());
        int aTokens = 0;
        for (ScheduledRow r : plan.rows()) {
            if (r.sequenceId() == a) {
                aTokens += r.tokenCount();
            }
        }
        assertEquals(64 - 8, aTokens, "a had what b did not need");
        h.runToEnd(100_000);
        assertEquals(4, h.tokens.get(a).size());
        assertEquals(4, h.tokens.get(b).size());
        assertEquals(0, h.kv.stats().blocks().used());
    }

    @Test
    void twoLongPromptsOfDifferentKeys_splitTheBudgetEvenly() {
        Harness h = new Harness(32, 64, 8, 256, new KvCacheConfig(4, 4096));
        long a = submit(h, request(1, 1000, 2), new Object(), "a");
        h.step();
        long b = submit(h, request(2, 1000, 2), new Object(), "b");
        StepPlan plan = h.step();
        int[] given = new int[2];
        for (ScheduledRow r : plan.rows()) {
            given[r.sequenceId() == a ? 0 : 1] += r.tokenCount();
        }
        assertEquals(32, given[0], "a: half of the step");
        assertEquals(32, given[1], "b: half of the step");
        h.runToEnd(100_000);
        assertEquals(2, h.tokens.get(a).size());
        assertEquals(2, h.tokens.get(b).size());
        assertEquals(0, h.kv.stats().blocks().used());
    }
}
