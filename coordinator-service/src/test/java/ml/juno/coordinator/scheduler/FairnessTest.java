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
 * Slots are shared between requests: four requests of n=8 and 200 tokens each fill every slot, yet a small request
 * that arrives afterwards gets its first token within two steps (without fairness it would wait for 200); every
 * sequence still produces exactly the tokens the fake engine expects (preempted ones are recomputed), and the retry
 * time grows with the queue.
 */
class FairnessTest {

    static GenerationRequest request(int seed, int maxTokens) {
        return new GenerationRequest(Harness.prompt(seed, 6, 32), SamplingParams.greedy(), StopCondition.of(maxTokens), 0, -1);
    }

    @Test
    void aSmallRequest_getsItsFirstTokenWithinTwoSteps_whileHugeOnesHoldEverySlot() {
        Harness h = new Harness(32, 64, 8, 256, new KvCacheConfig(4, 2048));
        List<Long> big = new ArrayList<>();
        for (int r = 0; r < 4; r++) {
            Object group = new Object();
            for (int c = 0; c < 8; c++) {
                big.add(h.submit(request(10 * r + c, 200), group));
            }
        }
        for (int i = 0; i < 20; i++) {
            h.step();
        }
        assertEquals(8, h.scheduler.runningCount(), "every slot is taken");
        int[] perRequest = new int[4];
        for (int i = 0; i < big.size(); i++) {
            if (!h.tokens.get(big.get(i)).isEmpty()) {
                perRequest[i / 8]++;
            }
        }
        for (int r = 0; r < 4; r++) {
            assertEquals(2, perRequest[r], "each of the four requests got 2 of the 8 slots: " + java.util.Arrays.toString(perRequest));
        }
        long small = h.submit(request(99, 5), new Object());
        int steps = 0;
        while (h.tokens.get(small).isEmpty()) {
            h.step();
            steps++;
            assertTrue(steps <= 2, "no first token after " + steps + " steps");
        }
        assertTrue(h.scheduler.fairnessPreemptions() >= 1);
        h.runToEnd(100_000);
        assertEquals(5, h.tokens.get(small).size());
        for (long id : big) {
            assertEquals(200, h.tokens.get(id).size(), "sequence " + id);
        }
        assertEquals(0, h.kv.stats().blocks().used());
    }

    @Test
    void retryAfter_growsWithTheQueue() {
        Harness h = new Harness(32, 64, 4, 64, new KvCacheConfig(4, 2048));
        java.time.Duration empty = h.scheduler.retryAfter();
        for (int i = 0; i < 40; i++) {
            h.submit(request(i, 50), null);
        }
        java.time.Duration full = h.scheduler.retryAfter();
        assertEquals(2000, empty.toMillis(), "the configured 2 s for an empty queue");
        assertTrue(full.compareTo(empty.multipliedBy(10)) >= 0, "40 waiting over 4 slots: " + full);
        assertTrue(full.toSeconds() <= 60);
    }
}
