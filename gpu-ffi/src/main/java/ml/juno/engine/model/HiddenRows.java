package ml.juno.engine.model;

/**
 * Final hidden states (after the output norm, before the output projection) of the rows a
 * {@link ml.juno.engine.step.StepBatch} asked for with {@code needsHidden}, in batch order: entry {@code i} belongs to
 * batch row {@link #batchRow(int)}. What embeddings are pooled from. Owned by the session and overwritten by the next
 * forward call; copy what must be kept.
 */
public final class HiddenRows {
    private final int dim;
    private final float[] data;   // [capacity][dim]
    private final int[] batchRows; // [capacity]
    private int count;

    HiddenRows(int dim, int capacity) {
        this.dim = dim;
        this.data = new float[dim * capacity];
        this.batchRows = new int[capacity];
    }

    void clear() {
        count = 0;
    }

    /** Appends batch row {@code row} as the next entry; returns the offset of its {@code dim} floats in {@link #data()}. */
    int add(int row) {
        batchRows[count] = row;
        return dim * count++;
    }

    /** Floats per row: the model's embedding length. */
    public int dim() {
        return dim;
    }

    public int count() {
        return count;
    }

    /** The batch row entry {@code i} belongs to. */
    public int batchRow(int i) {
        return batchRows[i];
    }

    /** Raw buffer, {@code [count][dim]} (longer than that). */
    public float[] data() {
        return data;
    }

    public float[] copyRow(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("hidden row " + i + " of " + count);
        }
        float[] r = new float[dim];
        System.arraycopy(data, i * dim, r, 0, dim);
        return r;
    }
}
