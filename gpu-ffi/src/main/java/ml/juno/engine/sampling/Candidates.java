package ml.juno.engine.sampling;

/**
 * Ordering and heap helpers over token ids keyed by their logit. "Better" means a higher logit, or
 * the same logit and a lower id, so every ordering is total and results never depend on heap shape.
 */
public final class Candidates {
    private Candidates() {
    }

    static boolean better(float[] logits, int offset, int a, int b) {
        float la = logits[offset + a];
        float lb = logits[offset + b];
        return la > lb || (la == lb && a < b);
    }

    /** Sift down in a heap whose root is the worst element (min-heap by "better"). */
    static void siftDownWorstRoot(float[] logits, int offset, int[] heap, int i, int n) {
        int x = heap[i];
        while (true) {
            int child = 2 * i + 1;
            if (child >= n) {
                break;
            }
            int right = child + 1;
            if (right < n && better(logits, offset, heap[child], heap[right])) {
                child = right; // the worse of the two children
            }
            if (!better(logits, offset, x, heap[child])) {
                break;
            }
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = x;
    }

    static void siftUpWorstRoot(float[] logits, int offset, int[] heap, int i) {
        int x = heap[i];
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (!better(logits, offset, heap[parent], x)) {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = x;
    }

    /** Sift down in a heap whose root is the best element (max-heap by "better"). */
    static void siftDownBestRoot(float[] logits, int[] heap, int i, int n) {
        int x = heap[i];
        while (true) {
            int child = 2 * i + 1;
            if (child >= n) {
                break;
            }
            int right = child + 1;
            if (right < n && better(logits, 0, heap[right], heap[child])) {
                child = right;
            }
            if (!better(logits, 0, heap[child], x)) {
                break;
            }
            heap[i] = heap[child];
            i = child;
        }
        heap[i] = x;
    }

    static void reverse(int[] a, int from, int to) {
        for (int i = from, j = to - 1; i < j; i++, j--) {
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }
}
