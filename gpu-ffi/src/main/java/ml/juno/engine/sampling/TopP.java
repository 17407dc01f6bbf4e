package ml.juno.engine.sampling;

/**
 * Stage 5 (with stage 6, min-p, folded in): nucleus truncation. Probabilities are the softmax over the
 * current candidates; the smallest set of best tokens whose sum reaches p is kept (the token that
 * crosses p stays; at least one token always stays). Candidates are popped from a max-heap one at a
 * time, so only the kept tokens are ordered.
 */
public final class TopP {
    private TopP() {
    }

    /**
     * @param logits    candidate logits, indexed by token id
     * @param ids       candidate ids in {@code ids[0..count)}, any order; on return the kept ids, best first
     * @param minP      min-p applied after top-p (0 = off). Tokens below the min-p floor can only sit at the
     *                  tail of the nucleus, so they are dropped before the heap is built; same result, less work.
     * @return number of kept ids
     */
    public static int truncate(float[] logits, int[] ids, int count, float p, float minP) {
        if (count <= 0) {
            throw new IllegalArgumentException("no candidates");
        }
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            max = Math.max(max, logits[ids[i]]);
        }
        if (max == Float.NEGATIVE_INFINITY) {
            throw new IllegalStateException("every token is masked (all logits are -Infinity)");
        }
        double z = 0;
        for (int i = 0; i < count; i++) {
            z += Math.exp(logits[ids[i]] - max);
        }
        float floor = minP > 0f ? (float) (max + Math.log(minP)) : Float.NEGATIVE_INFINITY;
        int n = 0;
        for (int i = 0; i < count; i++) {
            int id = ids[i];
            if (logits[id] >= floor) {
                ids[n++] = id;
            }
        }
        for (int i = n / 2 - 1; i >= 0; i--) {
            Candidates.siftDownBestRoot(logits, ids, i, n);
        }
        double target = p * z;
        double cum = 0;
        int heap = n;
        while (heap > 0) {
            int best = ids[0];
            ids[0] = ids[heap - 1];
            ids[heap - 1] = best; // popped ids collect at the back, best last
            heap--;
            Candidates.siftDownBestRoot(logits, ids, 0, heap);
            cum += Math.exp(logits[best] - max);
            if (cum >= target) {
                break;
            }
        }
        int kept = n - heap;
        Candidates.reverse(ids, heap, n);
        System.arraycopy(ids, heap, ids, 0, kept);
        return kept;
    }
}
