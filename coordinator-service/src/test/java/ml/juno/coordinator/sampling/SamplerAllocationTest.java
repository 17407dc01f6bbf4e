package ml.juno.coordinator.sampling;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The draw must allocate nothing per token (no boxing, no temporary arrays, no full sort). */
class SamplerAllocationTest {
    private static final int V = 2048;
    private static final int DRAWS = 300;

    private static final com.sun.management.ThreadMXBean MX =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private static long allocatedBytes() {
        return MX.getCurrentThreadAllocatedBytes();
    }

    private static long bytesPerRun(Sampler s, SamplerState st, float[] logits, int rows) {
        int sink = 0;
        for (int i = 0; i < 100; i++) { // warm-up
            sink += s.sample(logits, (i % rows) * V, st);
        }
        allocatedBytes(); // the probe itself may allocate on first use
        long before = allocatedBytes();
        for (int i = 0; i < DRAWS; i++) {
            int t = s.sample(logits, (i % rows) * V, st);
            st.accept(t);
            sink += t;
        }
        long after = allocatedBytes();
        assertEquals(true, sink >= 0);
        return after - before;
    }

    @Test
    void sample_allocatesNothingPerTokenOnEveryPath() {
        assumeTrue(MX.isThreadAllocatedMemorySupported() && MX.isThreadAllocatedMemoryEnabled(),
                "this JVM cannot measure allocation");
        SplittableRandom r = new SplittableRandom(1);
        int rows = 4;
        float[] logits = new float[V * rows];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (r.nextGaussian() * 3);
        }
        var penalties = new RepetitionPenalties(1.1f, 0.2f, 0.1f, 64);
        var bias = LogitBias.of(Map.of(5, 1f, 77, Float.NEGATIVE_INFINITY));
        SamplingParams[] cases = {
            SamplingParams.greedy(),
            SamplingParams.defaults(3),
            new SamplingParams(0.9f, new Truncation(0, 0.9f, 0f), penalties, bias, 4),   // top-p over the whole vocabulary
            new SamplingParams(1.2f, new Truncation(0, 1f, 0.05f), penalties, bias, 5),  // min-p only
            new SamplingParams(1f, Truncation.NONE, penalties, bias, 6),                 // plain softmax draw
        };
        Sampler sampler = new Sampler(V);
        for (SamplingParams p : cases) {
            SamplerState st = new SamplerState(p, V);
            st.suppress(new int[] {1, 2});
            // one allocation per draw would be >= 16 bytes each, in every run; JIT compilation or a deoptimisation
            // during a run may allocate a few hundred bytes once, so the best of three runs is judged
            long bytes = Math.min(bytesPerRun(sampler, st, logits, rows),
                    Math.min(bytesPerRun(sampler, st, logits, rows), bytesPerRun(sampler, st, logits, rows)));
            assertTrue(bytes < DRAWS, bytes + " bytes allocated by " + DRAWS + " draws with " + p);
        }
    }
}
