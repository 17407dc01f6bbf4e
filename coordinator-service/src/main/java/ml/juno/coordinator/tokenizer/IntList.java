package ml.juno.coordinator.tokenizer;

import java.util.Arrays;

/** A growable list of primitive ints, so token ids never get boxed. */
final class IntList {
    private int[] a;
    private int size;

    IntList(int capacity) {
        a = new int[Math.max(4, capacity)];
    }

    void add(int v) {
        if (size == a.length) {
            a = Arrays.copyOf(a, a.length * 2);
        }
        a[size++] = v;
    }

    int get(int i) {
        return a[i];
    }

    int size() {
        return size;
    }

    void clear() {
        size = 0;
    }

    int[] toArray() {
        return Arrays.copyOf(a, size);
    }
}
