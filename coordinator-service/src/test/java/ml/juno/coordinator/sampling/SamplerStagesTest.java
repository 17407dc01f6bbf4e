package ml.juno.coordinator.sampling;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.engine.sampling.Draw;
import ml.juno.engine.sampling.Greedy;
import ml.juno.engine.sampling.MinP;
import ml.juno.engine.sampling.Penalties;
import ml.juno.engine.sampling.Temperature;
import ml.juno.engine.sampling.TokenWindow;
import ml.juno.engine.sampling.TopK;
import ml.juno.engine.sampling.TopP;
import ml.juno.engine.sampling.Xoshiro256;
import org.junit.jupiter.api.Test;

class SamplerStagesTest {

    private static int[] head(int[] a, int n) {
        return Arrays.copyOf(a, n);
    }

    @Test
    void greedy_picksArgmaxAndBreaksTiesTowardLowestId() {
        assertEquals(2, Greedy.argmax(new float[] {0f, 1f, 3f, -1f}, 0, 4));
        assertEquals(1, Greedy.argmax(new float[] {0f, 5f, 2f, 5f, 5f}, 0, 5));
        assertEquals(0, Greedy.argmax(new float[] {7f, 7f}, 0, 2));
        // offset into a batch of rows
        assertEquals(1, Greedy.argmax(new float[] {9f, 9f, 0f, 4f, 4f}, 2, 3));
    }

    @Test
    void greedy_rejectsAllMaskedRow() {
        float ninf = Float.NEGATIVE_INFINITY;
        assertThrows(IllegalStateException.class, () -> Greedy.argmax(new float[] {ninf, ninf}, 0, 2));
    }

    @Test
    void penalties_divideDividesPositiveAndMultipliesNegativeOncePerDistinctToken() {
        float[] logits = {2f, -2f, 4f, 1f};
        TokenWindow w = new TokenWindow(8);
        for (int t : new int[] {0, 1, 0, 0}) {
            w.add(t);
        }
        int[] counts = new int[4];
        Penalties.apply(logits, w.tokens(), w.size(), 2f, 0f, 0f, counts);
        assertArrayEquals(new float[] {1f, -4f, 4f, 1f}, logits, 0f);
        assertArrayEquals(new int[4], counts, "scratch counts left zero");
    }

    @Test
    void penalties_frequencyScalesWithCountAndPresenceIsFlat() {
        float[] logits = {1f, 1f, 1f};
        TokenWindow w = new TokenWindow(8);
        for (int t : new int[] {0, 0, 0, 1}) {
            w.add(t);
        }
        Penalties.apply(logits, w.tokens(), w.size(), 1f, 0.5f, 0.25f, new int[3]);
        assertArrayEquals(new float[] {1f - 1.5f - 0.25f, 1f - 0.5f - 0.25f, 1f}, logits, 1e-6f);
    }

    @Test
    void penalties_onlySeeTheWindow() {
        TokenWindow w = new TokenWindow(2);
        for (int t : new int[] {0, 1, 2}) { // token 0 falls out of the window
            w.add(t);
        }
        float[] logits = {3f, 3f, 3f};
        Penalties.apply(logits, w.tokens(), w.size(), 3f, 0f, 0f, new int[3]);
        assertArrayEquals(new float[] {3f, 1f, 1f}, logits, 0f);
    }

    @Test
    void logitBias_addsAndBans() {
        float[] logits = {1f, 2f, 3f};
        LogitBias.of(Map.of(0, 5f, 2, Float.NEGATIVE_INFINITY)).addTo(logits);
        assertArrayEquals(new float[] {6f, 2f, Float.NEGATIVE_INFINITY}, logits, 0f);
        assertThrows(IllegalArgumentException.class, () -> new LogitBias(new int[] {1, 1}, new float[] {1f, 2f}));
        assertThrows(IllegalArgumentException.class, () -> new LogitBias(new int[] {-1}, new float[] {1f}));
    }

    @Test
    void temperature_dividesLogits() {
        float[] logits = {1f, -2f, 4f};
        Temperature.apply(logits, 3, 0.5f);
        assertArrayEquals(new float[] {2f, -4f, 8f}, logits, 0f);
        assertThrows(IllegalArgumentException.class, () -> Temperature.apply(logits, 3, 0f));
    }

    @Test
    void topK_returnsBestFirstWithTiesByLowerId() {
        float[] logits = {0.5f, 3f, 1f, 3f, -1f, 2f};
        int[] out = new int[6];
        assertEquals(3, TopK.select(logits, 0, 6, 3, out));
        assertArrayEquals(new int[] {1, 3, 5}, head(out, 3));
        assertEquals(6, TopK.select(logits, 0, 6, 10, out));
        assertArrayEquals(new int[] {1, 3, 5, 2, 0, 4}, out);
    }

    @Test
    void topK_matchesAFullSortOnRandomRows() {
        SplittableRandom r = new SplittableRandom(7);
        for (int trial = 0; trial < 200; trial++) {
            int v = 1 + r.nextInt(300);
            float[] logits = new float[v];
            for (int i = 0; i < v; i++) {
                logits[i] = r.nextInt(20) / 4f; // many ties
            }
            int k = 1 + r.nextInt(v);
            int[] out = new int[v];
            int m = TopK.select(logits, 0, v, k, out);
            Integer[] all = new Integer[v];
            for (int i = 0; i < v; i++) {
                all[i] = i;
            }
            Arrays.sort(all, (a, b) -> logits[a] != logits[b] ? Float.compare(logits[b], logits[a]) : a - b);
            int[] expected = new int[k];
            for (int i = 0; i < k; i++) {
                expected[i] = all[i];
            }
            assertArrayEquals(expected, head(out, m));
        }
    }

    @Test
    void topP_keepsSmallestSetReachingThresholdIncludingTheCrossingToken() {
        // probabilities 0.5, 0.25, 0.125, 0.125 (logits are log-probabilities)
        float[] logits = {(float) Math.log(0.125), (float) Math.log(0.5), (float) Math.log(0.25),
                (float) Math.log(0.125)};
        int[] ids = {0, 1, 2, 3};
        assertEquals(1, TopP.truncate(logits, ids, 4, 0.5f, 0f), "0.5 alone reaches p=0.5");
        assertEquals(1, ids[0]);
        ids = new int[] {0, 1, 2, 3};
        assertEquals(2, TopP.truncate(logits, ids, 4, 0.6f, 0f), "0.5 < 0.6, so the crossing 0.25 stays");
        assertArrayEquals(new int[] {1, 2}, head(ids, 2));
        ids = new int[] {0, 1, 2, 3};
        assertEquals(3, TopP.truncate(logits, ids, 4, 0.8f, 0f));
        assertArrayEquals(new int[] {1, 2, 0}, head(ids, 3), "tie between 0 and 3 goes to the lower id");
        ids = new int[] {0, 1, 2, 3};
        assertEquals(1, TopP.truncate(logits, ids, 4, 0.01f, 0f), "at least one token stays");
    }

    @Test
    void topP_normalisesOverTheCurrentCandidatesOnly() {
        // after top-k = {1, 2} the probabilities are 2/3, 1/3
        float[] logits = {(float) Math.log(0.125), (float) Math.log(0.5), (float) Math.log(0.25),
                (float) Math.log(0.125)};
        int[] ids = {1, 2};
        assertEquals(1, TopP.truncate(logits, ids, 2, 0.66f, 0f));
        ids = new int[] {1, 2};
        assertEquals(2, TopP.truncate(logits, ids, 2, 0.67f, 0f));
    }

    @Test
    void minP_dropsTokensBelowFractionOfBest() {
        float[] logits = {(float) Math.log(0.5), (float) Math.log(0.3), (float) Math.log(0.1),
                (float) Math.log(0.1)};
        int[] ids = {0, 1, 2, 3};
        assertEquals(2, MinP.filter(logits, ids, 4, 0.5f)); // keeps p >= 0.25
        assertArrayEquals(new int[] {0, 1}, head(ids, 2));
        ids = new int[] {0, 1, 2, 3};
        assertEquals(4, MinP.filter(logits, ids, 4, 0.2f)); // 0.1 >= 0.1: boundary kept
        ids = new int[] {0, 1, 2, 3};
        assertEquals(4, MinP.filter(logits, ids, 4, 0f));
    }

    @Test
    void topPWithMinP_equalsTopPThenMinP() {
        SplittableRandom r = new SplittableRandom(11);
        for (int trial = 0; trial < 200; trial++) {
            int v = 2 + r.nextInt(100);
            float[] logits = new float[v];
            for (int i = 0; i < v; i++) {
                logits[i] = (float) (r.nextDouble() * 6 - 3);
            }
            float p = (float) (0.05 + 0.9 * r.nextDouble());
            float minP = (float) (0.5 * r.nextDouble());
            int[] fused = identity(v);
            int nf = TopP.truncate(logits, fused, v, p, minP);
            int[] staged = identity(v);
            int ns = TopP.truncate(logits, staged, v, p, 0f);
            ns = MinP.filter(logits, staged, ns, minP);
            assertArrayEquals(head(staged, ns), head(fused, nf));
        }
    }

    @Test
    void draw_followsTheCumulativeDistribution() {
        float[] logits = {(float) Math.log(0.25), (float) Math.log(0.75)};
        int[] ids = {0, 1};
        assertEquals(0, Draw.pick(logits, ids, 2, 0.0));
        assertEquals(0, Draw.pick(logits, ids, 2, 0.2499));
        assertEquals(1, Draw.pick(logits, ids, 2, 0.2501));
        assertEquals(1, Draw.pick(logits, ids, 2, 0.9999999));
        float[] banned = {0f, Float.NEGATIVE_INFINITY};
        assertEquals(0, Draw.pick(banned, ids, 2, 0.9999999), "a zero-probability token is never drawn");
    }

    static int[] identity(int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        return a;
    }
}
