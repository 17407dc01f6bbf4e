package ml.juno.coordinator.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import org.junit.jupiter.api.Test;

/**
 * The time-slice rule (issue #20, fairness): four n=16 requests fill the slots, one sequence each; a small request's
 * first token comes within a quantum (plus its prefill step), the big ones still all finish, seeded outputs do not
 * change, and in steady overload of equal requests the rule preempts rarely.
 */
class QuantumFairnessTest {
    private static final int V = 32;
    private static final int RUNNING = 4;
    private static final int BIG_TOKENS = 300;

    private static Harness harness(int quantum) {
        return new Harness(V, 64, RUNNING, 256, new KvCacheConfig(4, 2048), quantum);
    }

    private static GenerationRequest request(int seed, int maxTokens) {
        return new GenerationRequest(Harness.prompt(seed, 8, V), SamplingParams.defaults(1000 + seed),
                StopCondition.of(maxTokens), 0, -1);
    }

    /** Four requests of 16 choices of BIG_TOKENS each; returns their ids. */
    private static List<Long> submitBig(Harness h) {
        List<Long> ids = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            Object group = new Object();
            for (int c = 0; c < 16; c++) {
                ids.add(h.submit(request(r * 16 + c, BIG_TOKENS), group));
            }
        }
        return ids;
    }

    /** Steps from the small request's submission (after {@code warm} steps of the big ones) to its first token. */
    private static int smallFirstTokenSteps(Harness h, long small, int limit) {
        for (int i = 1; i <= limit; i++) {
            h.step();
            if (!h.tokens.get(small).isEmpty()) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void smallRequest_getsItsFirstTokenWithinAQuantum_andTheBigOnesAllFinish() {
        int quantum = 32;
        Harness h = harness(quantum);
        List<Long> big = submitBig(h);
        for (int i = 0; i < 50; i++) {
            h.step();
        }
        assertEquals(RUNNING, h.scheduler.runningCount(), "the big requests fill every slot");
        long small = h.submit(request(999, 4), null);
        int steps = smallFirstTokenSteps(h, small, 10_000);
        // it waits `quantum` steps, then takes a slot: its prefill step samples its first token
        assertTrue(steps > 0 && steps <= quantum + 2, "first token after " + steps + " steps, bound " + (quantum + 2));
        assertTrue(h.scheduler.quantumPreemptions() >= 1);

        h.runToEnd(200_000);
        for (long id : big) { // no starvation: every preempted big sequence comes back and finishes whole
            assertEquals(FinishReason.LENGTH, h.finished.get(id).reason(), "big " + id);
            assertEquals(BIG_TOKENS, h.tokens.get(id).size(), "big " + id);
        }
        assertEquals(4, h.tokens.get(small).size());
        assertEquals(0, h.kv.stats().blocks().used());
    }

    @Test
    void withoutTheQuantum_theSmallRequestWaitsForABigSequenceToFinish() {
        Harness h = harness(0);
        submitBig(h);
        for (int i = 0; i < 50; i++) {
            h.step();
        }
        long small = h.submit(request(999, 4), null);
        int steps = smallFirstTokenSteps(h, small, 100_000);
        assertTrue(steps < 0 || steps > BIG_TOKENS - 60, "the bound above is the rule's doing: " + steps);
        assertEquals(0, h.scheduler.quantumPreemptions());
    }

    @Test
    void seededOutputs_areTheSameWithAndWithoutPreemption() {
        Harness plain = seeded(0);
        Harness sliced = seeded(8); // a short quantum: round robin over the slots, many preemptions
        assertEquals(0, plain.scheduler.quantumPreemptions());
        assertTrue(sliced.scheduler.quantumPreemptions() > 10, "preempted " + sliced.scheduler.quantumPreemptions());
        assertEquals(plain.tokens, sliced.tokens);
        // resuming is cheap: the committed blocks are found in the prefix cache, so each preemption recomputes at most
        // its last partial block (block size 4) and the token fed back
        long extra = computed(sliced) - computed(plain);
        assertTrue(extra <= sliced.scheduler.quantumPreemptions() * 4,
                extra + " tokens recomputed for " + sliced.scheduler.quantumPreemptions() + " preemptions");
        for (List<Integer> t : sliced.tokens.values()) {
            assertEquals(120, t.size());
        }
    }

    private static long computed(Harness h) {
        return h.plans.stream().mapToLong(StepPlan::totalTokens).sum();
    }

    /** Twelve seeded single-choice requests of 120 tokens on four slots, and one n=16 request. */
    private static Harness seeded(int quantum) {
        Harness h = harness(quantum);
        for (int i = 0; i < 12; i++) {
            h.submit(request(i, 120), null);
        }
        Object group = new Object();
        for (int c = 0; c < 16; c++) {
            h.submit(request(100 + c, 120), group);
        }
        h.runToEnd(200_000);
        return h;
    }

    @Test
    void steadyOverloadOfEqualRequests_preemptsRarely() {
        // requests shorter than the quantum: a running one never runs a quantum, so nothing is preempted at all
        assertEquals(0, overload(128, 64));
        // requests longer than the quantum: each preemption follows at least a quantum of the victim's steps
        int quantum = 64;
        Harness h = harness(quantum);
        long preempted = overload(h, 200);
        long steps = h.plans.size();
        assertTrue(preempted <= steps * RUNNING / quantum, preempted + " preemptions in " + steps + " steps");
        assertTrue(h.scheduler.generatedTokens() >= (long) 48 * 200);
    }

    private static long overload(int quantum, int maxTokens) {
        return overload(harness(quantum), maxTokens);
    }

    /** 16 equal requests queued, then one more each time one finishes, 48 in all; returns the quantum preemptions. */
    private static long overload(Harness h, int maxTokens) {
        int submitted = 0;
        for (; submitted < 16; submitted++) {
            h.submit(request(submitted, maxTokens), null);
        }
        while (h.scheduler.hasWork()) {
            int before = h.finished.size();
            h.step();
            for (int f = before; f < h.finished.size() && submitted < 48; f++) {
                h.submit(request(submitted++, maxTokens), null);
            }
            assertTrue(h.plans.size() < 100_000, "overload run does not end");
        }
        for (var e : h.tokens.entrySet()) {
            assertEquals(maxTokens, e.getValue().size(), "request " + e.getKey());
        }
        return h.scheduler.quantumPreemptions();
    }
}
