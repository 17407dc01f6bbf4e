package ml.juno.engine.sampling;

/** Stage 7: draws one candidate with probability softmax(logit) over the candidates. */
public final class Draw {
    private Draw() {
    }

    /**
     * @param u uniform in [0, 1) from the sequence's generator
     * @return the drawn token id
     */
    public static int pick(float[] logits, int[] ids, int count, double u) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            max = Math.max(max, logits[ids[i]]);
        }
        if (max == Float.NEGATIVE_INFINITY) {
            throw new IllegalStateException("every token is masked (all logits are -Infinity)");
        }
        double sum = 0;
        for (int i = 0; i < count; i++) {
            sum += Math.exp(logits[ids[i]] - max);
        }
        double target = u * sum;
        double cum = 0;
        int last = ids[0];
        for (int i = 0; i < count; i++) {
            int id = ids[i];
            double w = Math.exp(logits[id] - max);
            if (w > 0) {
                cum += w;
                last = id;
                if (cum > target) {
                    return id;
                }
            }
        }
        return last; // rounding left target at the very end
    }
}
