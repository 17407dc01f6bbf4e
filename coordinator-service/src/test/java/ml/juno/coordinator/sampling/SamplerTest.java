package ml.juno.coordinator.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.engine.sampling.Greedy;
import ml.juno.engine.sampling.TopK;
import org.junit.jupiter.api.Test;

class SamplerTest {
    private static final int V = 50;

    private static float[] randomLogits(long seed, int rows) {
        SplittableRandom r = new SplittableRandom(seed);
        float[] l = new float[V * rows];
        for (int i = 0; i < l.length; i++) {
            l[i] = (float) (r.nextGaussian() * 2);
        }
        return l;
    }

    private static SamplingParams params(float t, Truncation tr, long seed) {
        return new SamplingParams(t, tr, RepetitionPenalties.NONE, LogitBias.NONE, seed);
    }

    private static int[] run(Sampler s, SamplerState st, float[] logits, int steps) {
        int[] out = new int[steps];
        for (int i = 0; i < steps; i++) {
            out[i] = s.sample(logits, (i % (logits.length / V)) * V, st);
            st.accept(out[i]);
        }
        return out;
    }

    @Test
    void sample_sameSeedGivesSameTokens() {
        float[] logits = randomLogits(1, 16);
        SamplingParams p = params(1f, new Truncation(20, 0.9f, 0.02f), 42);
        int[] a = run(new Sampler(V), new SamplerState(p, V), logits, 64);
        int[] b = run(new Sampler(V), new SamplerState(p, V), logits, 64);
        assertArrayEquals(a, b);
        int[] c = run(new Sampler(V), new SamplerState(params(1f, new Truncation(20, 0.9f, 0.02f), 43), V), logits, 64);
        assertNotEquals(java.util.Arrays.toString(a), java.util.Arrays.toString(c), "another seed, another stream");
    }

    @Test
    void sample_sequenceIsIndependentOfOtherSequencesSharingTheSampler() {
        float[] logits = randomLogits(2, 8);
        SamplingParams p = params(0.9f, Truncation.NONE, 7);
        int[] alone = run(new Sampler(V), new SamplerState(p, V), logits, 40);

        Sampler shared = new Sampler(V);
        SamplerState mine = new SamplerState(p, V);
        SamplerState other = new SamplerState(params(1.3f, new Truncation(5, 0.5f, 0f), 99), V);
        int[] interleaved = new int[40];
        for (int i = 0; i < 40; i++) {
            shared.sample(logits, ((i + 3) % 8) * V, other); // another request draws in between
            interleaved[i] = shared.sample(logits, (i % 8) * V, mine);
            mine.accept(interleaved[i]);
        }
        assertArrayEquals(alone, interleaved);
    }

    @Test
    void sample_neverModifiesTheInputLogits() {
        float[] logits = randomLogits(3, 1);
        float[] copy = logits.clone();
        SamplingParams p = new SamplingParams(0.7f, new Truncation(10, 0.8f, 0.1f),
                new RepetitionPenalties(1.3f, 0.2f, 0.1f, 16), LogitBias.of(Map.of(3, 2f)), 1);
        SamplerState st = new SamplerState(p, V);
        st.accept(new int[] {1, 2, 3}, 0, 3);
        new Sampler(V).sample(logits, 0, st);
        assertArrayEquals(copy, logits, 0f);
    }

    @Test
    void sample_greedyIgnoresSeedButAppliesBiasAndPenalties() {
        float[] logits = new float[V];
        logits[4] = 5f;
        logits[9] = 4f;
        Sampler s = new Sampler(V);
        assertEquals(4, s.sample(logits, 0, new SamplerState(SamplingParams.greedy(), V)));
        SamplingParams biased = new SamplingParams(0f, Truncation.NONE, RepetitionPenalties.NONE,
                LogitBias.of(Map.of(9, 2f)), 123);
        assertEquals(9, s.sample(logits, 0, new SamplerState(biased, V)));
        SamplingParams penalised = new SamplingParams(0f, Truncation.NONE, new RepetitionPenalties(2f, 0f, 0f, 4),
                LogitBias.NONE, 0);
        SamplerState st = new SamplerState(penalised, V);
        st.accept(4); // 5/2 = 2.5 < 4
        assertEquals(9, s.sample(logits, 0, st));
    }

    @Test
    void sample_topKOneIsGreedyWhateverTheTemperature() {
        float[] logits = randomLogits(5, 4);
        Sampler s = new Sampler(V);
        SamplerState st = new SamplerState(params(5f, new Truncation(1, 1f, 0f), 9), V);
        for (int row = 0; row < 4; row++) {
            assertEquals(Greedy.argmax(logits, row * V, V), s.sample(logits, row * V, st));
        }
    }

    @Test
    void sample_drawsOnlyFromTheTruncatedSet() {
        float[] logits = randomLogits(6, 1);
        int[] top = new int[V];
        TopK.select(logits, 0, V, 3, top);
        Sampler s = new Sampler(V);
        SamplerState st = new SamplerState(params(2f, new Truncation(3, 1f, 0f), 5), V);
        boolean[] seen = new boolean[V];
        for (int i = 0; i < 500; i++) {
            seen[s.sample(logits, 0, st)] = true;
        }
        for (int id = 0; id < V; id++) {
            boolean inTop = id == top[0] || id == top[1] || id == top[2];
            assertEquals(inTop, seen[id], "token " + id);
        }
    }

    @Test
    void sample_frequenciesFollowTheSoftmax() {
        float[] logits = new float[V];
        java.util.Arrays.fill(logits, Float.NEGATIVE_INFINITY);
        logits[0] = 0f;
        logits[1] = (float) Math.log(3); // p = 1/4, 3/4
        Sampler s = new Sampler(V);
        SamplerState st = new SamplerState(params(1f, Truncation.NONE, 2024), V);
        int ones = 0;
        int n = 20_000;
        for (int i = 0; i < n; i++) {
            ones += s.sample(logits, 0, st);
        }
        assertEquals(0.75, ones / (double) n, 0.015);
    }

    @Test
    void sample_suppressedTokensAreNeverDrawnUntilCleared() {
        float[] logits = new float[V];
        logits[7] = 10f;
        Sampler s = new Sampler(V);
        SamplerState st = new SamplerState(SamplingParams.greedy(), V);
        st.suppress(new int[] {7});
        assertNotEquals(7, s.sample(logits, 0, st));
        st.clearSuppressed();
        assertEquals(7, s.sample(logits, 0, st));
    }

    @Test
    void sample_rejectsNaNAndBadRows() {
        float[] logits = new float[V];
        logits[3] = Float.NaN;
        Sampler s = new Sampler(V);
        SamplerState st = new SamplerState(SamplingParams.greedy(), V);
        var e = assertThrows(IllegalArgumentException.class, () -> s.sample(logits, 0, st));
        assertTrue(e.getMessage().contains("token 3"));
        assertThrows(IllegalArgumentException.class, () -> s.sample(new float[V], 1, st));
        assertThrows(IllegalArgumentException.class, () -> new SamplerState(
                new SamplingParams(1f, Truncation.NONE, RepetitionPenalties.NONE, LogitBias.of(Map.of(V, 1f)), 0), V));
    }

    @Test
    void logprobs_areLogSoftmaxOfUnmodifiedLogits() {
        float[] logits = {(float) Math.log(0.5), (float) Math.log(0.25), (float) Math.log(0.125),
                (float) Math.log(0.125)};
        Sampler s = new Sampler(4);
        TokenLogprobs lp = s.logprobs(logits, 0, 2, 3);
        assertEquals(2, lp.tokenId());
        assertEquals(Math.log(0.125), lp.logprob(), 1e-6);
        assertArrayEquals(new int[] {0, 1, 2}, lp.topIds());
        assertArrayEquals(new float[] {(float) Math.log(0.5), (float) Math.log(0.25), (float) Math.log(0.125)},
                lp.topLogprobs(), 1e-6f);
        // shifting every logit changes nothing
        float[] shifted = logits.clone();
        for (int i = 0; i < 4; i++) {
            shifted[i] += 100f;
        }
        assertEquals(lp.logprob(), s.logprobs(shifted, 0, 2, 0).logprob(), 1e-5f);
        assertEquals(0, s.logprobs(logits, 0, 1, 0).topIds().length);
    }

    @Test
    void params_rejectOutOfRangeValues() {
        assertThrows(IllegalArgumentException.class, () -> new Truncation(-1, 1f, 0f));
        assertThrows(IllegalArgumentException.class, () -> new Truncation(0, 0f, 0f));
        assertThrows(IllegalArgumentException.class, () -> new Truncation(0, 1.01f, 0f));
        assertThrows(IllegalArgumentException.class, () -> new Truncation(0, 1f, 1.5f));
        assertThrows(IllegalArgumentException.class, () -> new RepetitionPenalties(0f, 0f, 0f, 1));
        assertThrows(IllegalArgumentException.class, () -> new RepetitionPenalties(1f, 0f, 0f, -1));
        assertThrows(IllegalArgumentException.class, () -> params(-0.1f, Truncation.NONE, 0));
        assertThrows(IllegalArgumentException.class, () -> params(Float.NaN, Truncation.NONE, 0));
    }
}
