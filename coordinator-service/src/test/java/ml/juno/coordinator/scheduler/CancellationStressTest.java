package ml.juno.coordinator.scheduler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.coordinator.kvcache.BlockTable;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import org.junit.jupiter.api.Test;

class CancellationStressTest {
    private static final int V = 64;
    private static final int BLOCKS = 48;
    private static final int BS = 4;

    @Test
    void thousandRequestsCancelledAtRandomPoints_leaveNoBlockAllocated() {
        SplittableRandom r = new SplittableRandom(20261129L);
        Harness h = new Harness(V, 48, 12, 2000, new KvCacheConfig(BS, BLOCKS));
        int[][] systemPrompts = {Harness.prompt(1, 17, V), Harness.prompt(2, 9, V), Harness.prompt(3, 30, V)};
        Map<Long, Integer> cancelAt = new HashMap<>();
        List<Long> live = new ArrayList<>();
        int submitted = 0;
        int step = 0;
        int cancelsBetweenScheduleAndUpdate = 0;
        while (submitted < 1000 || h.scheduler.hasWork()) {
            for (int k = r.nextInt(4); k > 0 && submitted < 1000; k--) {
                int[] sys = systemPrompts[r.nextInt(systemPrompts.length)];
                int[] prompt = java.util.Arrays.copyOf(sys, sys.length + 1 + r.nextInt(12));
                for (int i = sys.length; i < prompt.length; i++) {
                    prompt[i] = r.nextInt(V);
                }
                SamplingParams sp = r.nextBoolean() ? SamplingParams.greedy() : SamplingParams.defaults(r.nextLong());
                long id = h.submit(prompt, sp, StopCondition.of(10 + r.nextInt(40)), r.nextInt(3));
                cancelAt.put(id, step + r.nextInt(40));
                live.add(id);
                submitted++;
            }
            for (int i = live.size() - 1; i >= 0; i--) {
                long id = live.get(i);
                if (h.finished.containsKey(id)) {
                    live.remove(i);
                } else if (cancelAt.get(id) <= step) {
                    h.scheduler.cancel(id);
                    live.remove(i);
                }
            }
            if (r.nextInt(10) == 0 && !live.isEmpty()) {
                // a cancel that lands while the step is executing
                StepPlan plan = h.scheduler.schedule();
                h.scheduler.cancel(live.remove(r.nextInt(live.size())));
                cancelsBetweenScheduleAndUpdate++;
                StepOutcome out = h.scheduler.update(plan, h.execute(plan));
                h.engine.observe(out);
                out.tokens().forEach(t -> h.tokens.get(t.sequenceId()).add(t.tokenId()));
                out.finished().forEach(f -> h.finished.put(f.sequenceId(), f));
            } else {
                h.step();
            }
            step++;
            var u = h.kv.stats().blocks();
            assertEquals(BLOCKS, u.used() + u.cached() + u.free(), "blocks balance at step " + step);
            assertTrue(step < 20_000, "runaway");
        }
        assertEquals(1000, h.finished.size(), "every request finished exactly once");
        long cancelled = h.finished.values().stream().filter(f -> f.reason() == FinishReason.CANCELLED).count();
        assertTrue(cancelled > 500, "most were cancelled: " + cancelled);
        assertTrue(cancelsBetweenScheduleAndUpdate > 10);
        assertTrue(h.kv.stats().prefix().hitTokens() > 0, "shared system prompts were hit");
        assertTrue(h.kv.stats().prefix().evictions() > 0, "the pool was under pressure: cached blocks evicted");
        assertTrue(h.scheduler.preemptions() > 0, "the pool was under pressure: sequences preempted");

        var usage = h.kv.stats().blocks();
        assertEquals(0, usage.used());
        for (int b = 0; b < BLOCKS; b++) {
            assertEquals(0, h.kv.refCount(b), "block " + b);
        }
        BlockTable whole = new BlockTable();
        assertTrue(h.kv.allocateSlots(whole, BLOCKS * BS), "a full-size allocation still fits");
        assertEquals(BLOCKS, whole.blockCount());
    }
}
