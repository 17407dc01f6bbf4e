package ml.juno.engine.sampling;

/**
 * The sampler chain on one row of logits, in its one order: copy (NaN refused) → penalties → logit bias → suppressed
 * tokens → temperature → top-k → top-p → min-p → draw; argmax when the temperature is 0. The coordinator's
 * {@code Sampler} masks a grammar in between ({@link #load} and {@link #adjust}) and checks that a token is left; a
 * node that has the logits draws whole rows with {@link #draw}. Both run this code, so a draw gives the same token
 * wherever it runs.
 *
 * <p>One instance per thread: it owns the vocabulary-sized scratch, so a draw allocates nothing (beyond its result) and
 * never sorts the whole vocabulary. The input logits are never modified.
 */
public final class SamplingChain {
    private final int vocab;
    private final float[] work;   // [vocab] logits after each stage
    private final int[] ids;      // [vocab] candidate token ids
    private final int[] counts;   // [vocab] occurrence counts, all zero between calls
    private final int[] topIds;   // [MAX_TOP_LOGPROBS]

    public SamplingChain(int vocabSize) {
        if (vocabSize <= 0) {
            throw new IllegalArgumentException("vocab size must be > 0, got " + vocabSize);
        }
        this.vocab = vocabSize;
        this.work = new float[vocabSize];
        this.ids = new int[vocabSize];
        this.counts = new int[vocabSize];
        this.topIds = new int[RowDraw.MAX_TOP_LOGPROBS];
    }

    public int vocabSize() {
        return vocab;
    }

    /** Copies {@code logits[offset..offset+vocab)} into the chain's working row (returned, to mask); NaN is refused. */
    public float[] load(float[] logits, int offset) {
        if (offset < 0 || offset + vocab > logits.length) {
            throw new IllegalArgumentException("logits row [" + offset + ", " + (offset + vocab) + ") outside an array of " + logits.length);
        }
        float[] w = work;
        for (int i = 0; i < vocab; i++) {
            float v = logits[offset + i];
            if (v != v) {
                throw new IllegalArgumentException("logit of token " + i + " is NaN");
            }
            w[i] = v;
        }
        return w;
    }

    /** Penalties over {@code window[0..n)}, the logit bias and the suppressed tokens, on the working row. */
    public void adjust(DrawParams p, int[] window, int n, int[] suppressed) {
        float[] w = work;
        if (n > 0 && p.penalized()) {
            Penalties.apply(w, window, n, p.repeat(), p.frequency(), p.presence(), counts);
        }
        int[] bias = p.biasIds();
        float[] values = p.biasValues();
        for (int i = 0; i < bias.length; i++) {
            w[bias[i]] += values[i];
        }
        for (int id : suppressed) {
            w[id] = Float.NEGATIVE_INFINITY;
        }
    }

    /** The token drawn from the working row: argmax when greedy, else temperature, truncation and one draw from {@code rng}. */
    public int choose(DrawParams p, Xoshiro256 rng) {
        float[] w = work;
        if (p.isGreedy()) {
            return Greedy.argmax(w, 0, vocab);
        }
        Temperature.apply(w, vocab, p.temperature());
        int count;
        if (p.topK() > 0 && p.topK() < vocab) {
            count = TopK.select(w, 0, vocab, p.topK(), ids);
        } else {
            for (int i = 0; i < vocab; i++) {
                ids[i] = i;
            }
            count = vocab;
        }
        if (p.topP() < 1f) {
            count = TopP.truncate(w, ids, count, p.topP(), p.minP());
        } else {
            count = MinP.filter(w, ids, count, p.minP());
        }
        return Draw.pick(w, ids, count, rng.nextDouble());
    }

    /** How many numbers {@link #choose} takes from the generator: one for a draw, none for argmax. */
    public static int drawsPerToken(DrawParams p) {
        return p.isGreedy() ? 0 : 1;
    }

    /** log Σ exp over {@code logits[offset..offset+vocab)} (max-shifted, summed in double). */
    public double logZ(float[] logits, int offset) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < vocab; i++) {
            max = Math.max(max, logits[offset + i]);
        }
        double sum = 0;
        for (int i = 0; i < vocab; i++) {
            sum += Math.exp(logits[offset + i] - max);
        }
        return max + Math.log(sum);
    }

    /** The ids of the {@code top} best tokens of the row, best first (ties: lower id), in the chain's scratch; returns how many. */
    public int top(float[] logits, int offset, int top) {
        return top == 0 ? 0 : TopK.select(logits, offset, vocab, top, topIds);
    }

    /** The scratch {@link #top} wrote. */
    public int[] topIds() {
        return topIds;
    }

    /**
     * Draws one whole row as the coordinator's sampler would for an unconstrained sequence in the state {@code row}
     * describes; a failed draw (a NaN logit, everything masked) is a result with the reason.
     */
    public DrawResult draw(float[] logits, int offset, RowDraw row) {
        try {
            String problem = row.vocabularyProblem(vocab);
            if (problem != null) {
                return DrawResult.failed(problem);
            }
            load(logits, offset);
            adjust(row.params(), row.window(), row.windowSize(), row.suppressed());
            Xoshiro256 rng = new Xoshiro256(row.rng()); // a sequence's generator, restored from the plan
            int token = choose(row.params(), rng);
            if (row.topLogprobs() < 0) {
                return DrawResult.of(token);
            }
            double z = logZ(logits, offset);
            int m = top(logits, offset, row.topLogprobs());
            int[] outIds = new int[m];
            float[] outLp = new float[m];
            for (int i = 0; i < m; i++) {
                outIds[i] = topIds[i];
                outLp[i] = (float) (logits[offset + topIds[i]] - z);
            }
            return new DrawResult(token, "", (float) (logits[offset + token] - z), outIds, outLp);
        } catch (RuntimeException e) {
            return DrawResult.failed("sampling failed: " + e.getMessage());
        }
    }
}
