package ml.juno.engine.model.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class MoeRoutingTest {

    @Test
    void route_keepsTheTopKBySoftmaxProbability_bestFirst_renormalized() {
        float[] logits = {0f, 2f, 1f, -1f, 0.5f, 9f};
        int[] chosen = new int[4];
        float[] w = new float[4];
        MoeRouting.route(logits, 1, 4, 2, true, chosen, w, 2);
        assertArrayEquals(new int[] {0, 0, 0, 1}, chosen); // experts 0 and 1 of row {2, 1, -1, 0.5}
        double e0 = Math.exp(2 - 2);
        double e1 = Math.exp(1 - 2);
        assertEquals(e0 / (e0 + e1), w[2], 1e-6);
        assertEquals(e1 / (e0 + e1), w[3], 1e-6);
        assertEquals(0f, logits[0]);
        assertEquals(9f, logits[5], "outside the row untouched");
    }

    @Test
    void route_withoutNormalization_keepsTheSoftmaxProbabilities() {
        float[] logits = {1f, 1f, 1f, 1f};
        int[] chosen = new int[2];
        float[] w = new float[2];
        MoeRouting.route(logits, 0, 4, 2, false, chosen, w, 0);
        assertArrayEquals(new int[] {0, 1}, chosen, "ties go to the lower expert id");
        assertArrayEquals(new float[] {0.25f, 0.25f}, w);
    }

    @Test
    void groupByExpert_listsEachExpertsChoicesInRowOrder() {
        int[] chosen = {2, 0, 0, 1, 2, 1}; // rows of k = 2: {2,0}, {0,1}, {2,1}
        int[] start = new int[4];
        int[] order = new int[6];
        MoeRouting.groupByExpert(chosen, 3, 2, 3, start, order);
        assertArrayEquals(new int[] {0, 2, 4, 6}, start);
        assertArrayEquals(new int[] {1, 2, 3, 5, 0, 4}, order);
    }
}
