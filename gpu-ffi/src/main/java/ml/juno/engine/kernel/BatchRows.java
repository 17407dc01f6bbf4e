package ml.juno.engine.kernel;

/**
 * The rows of one forward step, as the kernels see them: row {@code i} belongs to sequence slot {@code slots[i]} at
 * position {@code positions[i]}. Arrays are preallocated to a capacity and reused; only the first {@link #size()}
 * entries count.
 */
public final class BatchRows {
    private final int[] slots;
    private final int[] positions;
    private int size;

    public BatchRows(int capacity) {
        if (capacity <= 0) {
            throw new IllegalArgumentException("capacity must be positive: " + capacity);
        }
        slots = new int[capacity];
        positions = new int[capacity];
    }

    public int capacity() {
        return slots.length;
    }

    public int size() {
        return size;
    }

    public int slot(int row) {
        return slots[row];
    }

    public int position(int row) {
        return positions[row];
    }

    /** Appends a row; returns its index. */
    public int add(int slot, int position) {
        if (size == slots.length) {
            throw new IllegalStateException("batch is full (" + slots.length + " rows)");
        }
        slots[size] = slot;
        positions[size] = position;
        return size++;
    }

    public void clear() {
        size = 0;
    }
}
