package ml.juno.engine.model;

/**
 * Logits of the rows a {@link ml.juno.engine.step.StepBatch} asked for, in batch order: entry {@code i} belongs to batch row
 * {@link #batchRow(int)}. Owned by the session and overwritten by the next forward call; copy what must be kept.
 */
public final class Logits {
    private final int vocab;
    private float[] data;
    private int[] batchRows;
    private int count;

    Logits(int vocab, int capacity) {
        this.vocab = vocab;
        this.data = new float[vocab * Math.max(1, Math.min(capacity, 16))];
        this.batchRows = new int[capacity];
    }

    /** Makes room for {@code n} rows (grows only the first time a larger count is seen). */
    float[] reserve(int n) {
        if (data.length < n * vocab) {
            data = new float[n * vocab];
        }
        count = n;
        return data;
    }

    void setBatchRow(int i, int row) {
        batchRows[i] = row;
    }

    public int vocab() {
        return vocab;
    }

    public int count() {
        return count;
    }

    /** The batch row entry {@code i} belongs to. */
    public int batchRow(int i) {
        return batchRows[i];
    }

    /** Raw buffer, {@code [count][vocab]}. */
    public float[] data() {
        return data;
    }

    public float get(int i, int token) {
        return data[i * vocab + token];
    }

    public float[] copyRow(int i) {
        float[] r = new float[vocab];
        System.arraycopy(data, i * vocab, r, 0, vocab);
        return r;
    }

    /** Greedy choice of entry {@code i}: the largest logit, ties to the lowest id. */
    public int argmax(int i) {
        int o = i * vocab;
        int best = 0;
        for (int t = 1; t < vocab; t++) {
            if (data[o + t] > data[o + best]) {
                best = t;
            }
        }
        return best;
    }

    /** The {@code k} largest logits of entry {@code i}, largest first, ties to the lower id. */
    public TopLogit[] top(int i, int k) {
        int o = i * vocab;
        k = Math.min(k, vocab);
        int[] ids = new int[k];
        int n = 0;
        for (int t = 0; t < vocab; t++) {
            float v = data[o + t];
            if (n == k && v <= data[o + ids[k - 1]]) {
                continue;
            }
            int j = n < k ? n++ : k - 1;
            while (j > 0 && data[o + ids[j - 1]] < v) {
                ids[j] = ids[j - 1];
                j--;
            }
            ids[j] = t;
        }
        TopLogit[] r = new TopLogit[n];
        for (int j = 0; j < n; j++) {
            r[j] = new TopLogit(ids[j], data[o + ids[j]]);
        }
        return r;
    }
}
