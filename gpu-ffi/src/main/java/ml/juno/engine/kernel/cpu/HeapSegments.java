package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;

/**
 * The heap segments of the few arrays one thread passes to native kernels, made once per array: a step reuses its
 * buffers, so wrapping them per call would allocate on every token. Not thread-safe: one per worker.
 */
final class HeapSegments {
    private final Object[] arrays = new Object[16];
    private final MemorySegment[] segments = new MemorySegment[16];
    private int next;

    MemorySegment of(float[] a) {
        for (int i = 0; i < arrays.length; i++) {
            if (arrays[i] == a) {
                return segments[i];
            }
        }
        return put(a, MemorySegment.ofArray(a));
    }

    MemorySegment of(long[] a) {
        for (int i = 0; i < arrays.length; i++) {
            if (arrays[i] == a) {
                return segments[i];
            }
        }
        return put(a, MemorySegment.ofArray(a));
    }

    private MemorySegment put(Object a, MemorySegment s) {
        arrays[next] = a;
        segments[next] = s;
        next = (next + 1) % arrays.length;
        return s;
    }
}
