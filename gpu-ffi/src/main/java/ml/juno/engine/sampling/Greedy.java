package ml.juno.engine.sampling;

/** Temperature 0: the most likely token, ties going to the lowest id. */
public final class Greedy {
    private Greedy() {
    }

    public static int argmax(float[] logits, int offset, int vocab) {
        int best = 0;
        float max = logits[offset];
        for (int i = 1; i < vocab; i++) {
            float v = logits[offset + i];
            if (v > max) { // strict: an equal later logit keeps the lower id
                max = v;
                best = i;
            }
        }
        if (max == Float.NEGATIVE_INFINITY) {
            throw new IllegalStateException("every token is masked (all logits are -Infinity)");
        }
        return best;
    }
}
