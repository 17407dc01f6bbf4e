package ml.juno.engine.sampling;

/** The last {@code capacity} tokens of a sequence, as a ring buffer (what the penalties look at). */
public final class TokenWindow {
    private final int[] ring; // [capacity]
    private int size;
    private int next;

    public TokenWindow(int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("window capacity must be >= 0, got " + capacity);
        }
        this.ring = new int[capacity];
    }

    public void add(int token) {
        if (ring.length == 0) {
            return;
        }
        ring[next] = token;
        next = next + 1 == ring.length ? 0 : next + 1;
        if (size < ring.length) {
            size++;
        }
    }

    public int size() {
        return size;
    }

    public int capacity() {
        return ring.length;
    }

    /** The i-th stored token, in no particular order (penalties only count occurrences). */
    public int get(int i) {
        if (i < 0 || i >= size) {
            throw new IndexOutOfBoundsException(i);
        }
        return ring[i];
    }

    /** The stored tokens are {@code tokens()[0 .. size())}, in no particular order; the array is the window's own. */
    public int[] tokens() {
        return ring;
    }

    public void clear() {
        size = 0;
        next = 0;
    }
}
