package ml.juno.coordinator.tokenizer;

import java.util.Arrays;

/**
 * Binary min-heap of candidate merges keyed by a {@code long} priority, with three int payloads per
 * entry. Allocation-free once grown; one instance serves one encode call.
 */
final class MergeHeap {
    private long[] key = new long[64];
    private int[] a = new int[64];
    private int[] b = new int[64];
    private int[] c = new int[64];
    private int size;

    /** Payloads of the entry last returned by {@link #pop()}. */
    int topA;
    int topB;
    int topC;

    boolean isEmpty() {
        return size == 0;
    }

    void clear() {
        size = 0;
    }

    void push(long k, int va, int vb, int vc) {
        if (size == key.length) {
            int n = size * 2;
            key = Arrays.copyOf(key, n);
            a = Arrays.copyOf(a, n);
            b = Arrays.copyOf(b, n);
            c = Arrays.copyOf(c, n);
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (key[parent] <= k) {
                break;
            }
            move(parent, i);
            i = parent;
        }
        key[i] = k;
        a[i] = va;
        b[i] = vb;
        c[i] = vc;
    }

    /** Removes the smallest entry and exposes its payloads in {@link #topA}/{@link #topB}/{@link #topC}. */
    void pop() {
        topA = a[0];
        topB = b[0];
        topC = c[0];
        int last = --size;
        if (last == 0) {
            return;
        }
        long k = key[last];
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= last) {
                break;
            }
            if (child + 1 < last && key[child + 1] < key[child]) {
                child++;
            }
            if (key[child] >= k) {
                break;
            }
            move(child, i);
            i = child;
        }
        key[i] = k;
        a[i] = a[last];
        b[i] = b[last];
        c[i] = c[last];
    }

    private void move(int from, int to) {
        key[to] = key[from];
        a[to] = a[from];
        b[to] = b[from];
        c[to] = c[from];
    }
}
