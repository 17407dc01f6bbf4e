package ml.juno.engine.model;

/**
 * The rows of one forward step: each row is (sequence slot, position, token) and whether its logits are wanted. Rows
 * may mix prompt chunks of several sequences and single next tokens. Preallocated to a capacity; reuse it with
 * {@link #clear()}.
 */
public final class ForwardBatch {
    private final int[] slots;
    private final int[] positions;
    private final int[] tokens;
    private final boolean[] wantLogits;
    private final int[] adapters;
    private int size;

    public ForwardBatch(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        slots = new int[capacity];
        positions = new int[capacity];
        tokens = new int[capacity];
        wantLogits = new boolean[capacity];
        adapters = new int[capacity];
    }

    public int capacity() {
        return slots.length;
    }

    public int size() {
        return size;
    }

    /** Appends a row without a named LoRA adapter; returns its index in the batch. */
    public int add(int slot, int position, int token, boolean logits) {
        return add(slot, position, token, logits, 0);
    }

    /**
     * Appends a row computed with the named LoRA adapter {@code adapter} (its id in the model's {@code LoraPlan}; 0:
     * none, adapters played for every row apply regardless); returns its index in the batch.
     */
    public int add(int slot, int position, int token, boolean logits, int adapter) {
        if (adapter < 0) {
            throw new IllegalArgumentException("negative LoRA adapter id " + adapter);
        }
        if (size == slots.length) {
            throw new IllegalStateException("forward batch is full (" + slots.length + " rows)");
        }
        slots[size] = slot;
        positions[size] = position;
        tokens[size] = token;
        wantLogits[size] = logits;
        adapters[size] = adapter;
        return size++;
    }

    /** Appends {@code tokens[from..to)} of one sequence at positions {@code start..}; logits for the last row only if asked. */
    public void addPrompt(int slot, int start, int[] promptTokens, int from, int to, boolean logitsForLast) {
        for (int i = from; i < to; i++) {
            add(slot, start + (i - from), promptTokens[i], logitsForLast && i == to - 1);
        }
    }

    public void clear() {
        size = 0;
    }

    public int slot(int row) {
        return slots[row];
    }

    public int position(int row) {
        return positions[row];
    }

    public int token(int row) {
        return tokens[row];
    }

    public boolean wantsLogits(int row) {
        return wantLogits[row];
    }

    /** The named LoRA adapter of the row (0: none). */
    public int adapter(int row) {
        return adapters[row];
    }
}
