package ml.juno.engine.sampling;

/**
 * Stage 4: the k best tokens by partial selection (a k-sized heap over the vocabulary, O(V log k)),
 * never a full sort.
 */
public final class TopK {
    private TopK() {
    }

    /**
     * Writes the ids of the {@code min(k, vocab)} best tokens of {@code logits[offset..offset+vocab)}
     * into {@code out}, best first (ties: lower id first), and returns how many were written.
     */
    public static int select(float[] logits, int offset, int vocab, int k, int[] out) {
        if (k <= 0) {
            throw new IllegalArgumentException("k must be > 0, got " + k);
        }
        int m = Math.min(k, vocab);
        for (int i = 0; i < m; i++) {
            out[i] = i;
            Candidates.siftUpWorstRoot(logits, offset, out, i);
        }
        for (int i = m; i < vocab; i++) {
            if (Candidates.better(logits, offset, i, out[0])) {
                out[0] = i;
                Candidates.siftDownWorstRoot(logits, offset, out, 0, m);
            }
        }
        // heap sort: moving the worst to the back leaves the best at the front
        for (int end = m - 1; end > 0; end--) {
            int t = out[0];
            out[0] = out[end];
            out[end] = t;
            Candidates.siftDownWorstRoot(logits, offset, out, 0, end);
        }
        return m;
    }
}
