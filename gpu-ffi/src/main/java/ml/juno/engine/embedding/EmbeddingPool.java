package ml.juno.engine.embedding;

import java.util.Arrays;

/**
 * Pools one sequence's final hidden states into its embedding as steps compute them, in any chunking: rows arrive in
 * position order (a prompt's chunks run in order), each once. Mean sums in double in position order, so the result
 * does not depend on how the prompt was split into steps or what else ran beside it. {@link #vector()} gives the
 * L2-normalised embedding once every row that {@link Pooling#uses} has arrived. Not for {@link Pooling#NONE} (one
 * vector per token: see {@link Embedder#tokenEmbeddings}). Not thread-safe.
 */
public final class EmbeddingPool {
    private final Pooling pooling;
    private final int length;
    private final double[] sum; // [dim] mean: running sum; cls/last: the chosen row
    private int rows;
    private int nextPosition;

    /**
     * @param pooling how to pool (not {@link Pooling#NONE})
     * @param length  the sequence's tokens
     * @param dim     floats per hidden state
     */
    public EmbeddingPool(Pooling pooling, int length, int dim) {
        if (pooling == Pooling.NONE) {
            throw new IllegalArgumentException("pooling none gives one vector per token, not one per sequence");
        }
        if (length < 1 || dim < 1) {
            throw new IllegalArgumentException("a pool needs at least one token and one dimension, got " + length + " and " + dim);
        }
        this.pooling = pooling;
        this.length = length;
        this.sum = new double[dim];
    }

    public Pooling pooling() {
        return pooling;
    }

    public int dim() {
        return sum.length;
    }

    /** Whether the final hidden state of {@code position} is wanted. */
    public boolean wants(int position) {
        return pooling.uses(position, length);
    }

    /** Starts over (the sequence is computed again from position 0, after a preemption). */
    public void reset() {
        Arrays.fill(sum, 0);
        rows = 0;
        nextPosition = 0;
    }

    /** The hidden state of {@code position}: {@code hidden[offset .. offset + dim)}. */
    public void add(float[] hidden, int offset, int position) {
        if (!wants(position) || position < nextPosition) {
            throw new IllegalArgumentException("position " + position + " is not wanted next by " + pooling
                    + " pooling of " + length + " tokens (next " + nextPosition + ")");
        }
        int dim = sum.length;
        for (int i = 0; i < dim; i++) {
            sum[i] += hidden[offset + i];
        }
        rows++;
        nextPosition = position + 1;
    }

    /** True once every wanted row has arrived. */
    public boolean complete() {
        return rows == switch (pooling) {
            case MEAN -> length;
            case CLS, LAST -> 1;
            case NONE -> throw new IllegalStateException();
        };
    }

    /** The pooled, L2-normalised embedding. */
    public float[] vector() {
        if (!complete()) {
            throw new IllegalStateException(pooling + " pooling of " + length + " tokens has " + rows + " rows so far");
        }
        double[] v = sum.clone();
        if (pooling == Pooling.MEAN) {
            for (int i = 0; i < v.length; i++) {
                v[i] /= length;
            }
        }
        return normalize(v);
    }

    /** {@code v / |v|₂} in float ({@code v} unchanged when it is all zeros). */
    public static float[] normalize(double[] v) {
        double ss = 0;
        for (double x : v) {
            ss += x * x;
        }
        double scale = ss > 0 ? 1 / Math.sqrt(ss) : 1;
        float[] out = new float[v.length];
        for (int i = 0; i < v.length; i++) {
            out[i] = (float) (v[i] * scale);
        }
        return out;
    }
}
