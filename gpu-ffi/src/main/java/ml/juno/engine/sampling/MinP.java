package ml.juno.engine.sampling;

/** Stage 6: keeps tokens whose probability is at least {@code minP} times the best one's. */
public final class MinP {
    private MinP() {
    }

    /**
     * Compacts {@code ids[0..count)} in place (order kept) to the tokens with
     * {@code logit >= maxLogit + ln(minP)}, i.e. {@code p >= minP * pMax}; returns the new count.
     */
    public static int filter(float[] logits, int[] ids, int count, float minP) {
        if (minP <= 0f) {
            return count;
        }
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            max = Math.max(max, logits[ids[i]]);
        }
        float floor = (float) (max + Math.log(minP));
        int n = 0;
        for (int i = 0; i < count; i++) {
            int id = ids[i];
            if (logits[id] >= floor) {
                ids[n++] = id;
            }
        }
        return n;
    }
}
