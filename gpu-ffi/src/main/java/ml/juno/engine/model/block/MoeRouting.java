package ml.juno.engine.model.block;

import ml.juno.engine.kernel.GgmlExp;

/**
 * The routing arithmetic of a softmax-gated mixture of experts, as ggml computes it: softmax ({@link GgmlExp#softmax}), top-k by probability (ties to the lower expert id), optional re-normalization by
 * the sum of the kept probabilities (clamped below at 2^-14 like llama.cpp).
 */
public final class MoeRouting {
    /** The smallest sum the kept weights are divided by (2^-14, llama.cpp's clamp). */
    public static final float MIN_WEIGHT_SUM = 6.103515625e-5f;

    private MoeRouting() {}

    /**
     * Row of {@code n} router logits at {@code logits[lo ..]} (turned into probabilities in place) → the {@code k} chosen
     * experts into {@code chosen[co ..]}, best first, and their weights into {@code weights[co ..]}.
     */
    public static void route(float[] logits, int lo, int n, int k, boolean normalize, int[] chosen, float[] weights, int co) {
        GgmlExp.softmax(logits, lo, n);
        for (int j = 0; j < k; j++) {
            int best = -1;
            for (int i = 0; i < n; i++) {
                if (!taken(chosen, co, j, i) && (best < 0 || logits[lo + i] > logits[lo + best])) {
                    best = i;
                }
            }
            chosen[co + j] = best;
            weights[co + j] = logits[lo + best];
        }
        if (normalize) {
            double ws = 0;
            for (int j = 0; j < k; j++) {
                ws += weights[co + j];
            }
            float total = Math.max((float) ws, MIN_WEIGHT_SUM);
            for (int j = 0; j < k; j++) {
                weights[co + j] /= total;
            }
        }
    }

    private static boolean taken(int[] chosen, int co, int count, int expert) {
        for (int j = 0; j < count; j++) {
            if (chosen[co + j] == expert) {
                return true;
            }
        }
        return false;
    }

    /**
     * Counting sort of the choices {@code chosen[0 .. rows·k)} by expert: expert {@code e}'s choices (indices into
     * {@code chosen}, so {@code index / k} is the row) end up at {@code order[start[e] .. start[e+1])} in row order.
     */
    public static void groupByExpert(int[] chosen, int rows, int k, int experts, int[] start, int[] order) {
        java.util.Arrays.fill(start, 0, experts + 1, 0);
        int total = rows * k;
        for (int c = 0; c < total; c++) {
            start[chosen[c] + 1]++;
        }
        for (int e = 0; e < experts; e++) {
            start[e + 1] += start[e];
        }
        // fill using start[e] as a cursor, then shift back
        for (int c = 0; c < total; c++) {
            order[start[chosen[c]]++] = c;
        }
        for (int e = experts; e > 0; e--) {
            start[e] = start[e - 1];
        }
        start[0] = 0;
    }
}
