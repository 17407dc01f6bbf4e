package ml.juno.engine.moe;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import ml.juno.engine.model.block.GatedFfn;

/**
 * One fixed-size piece of the RAM tier: holds one expert's gate/up/down bytes at a time, as read from the file
 * (each run at its file offset modulo the alignment, so the matrices keep the file's alignment). A cache slot keeps
 * its expert until evicted; a staging slot holds a miss only for the layer step that needed it.
 */
final class Slot {
    final int id;
    final boolean cache;
    final MemorySegment mem;
    final ExpertReader.Task[] tasks;
    /** The expert held (or being read): layer index in the store, expert id; -1 when empty. */
    int layer = -1;
    int expert = -1;
    /** The FFN over this slot's bytes for the expert held ({@code null} when empty). */
    GatedFfn ffn;
    /** Whether the held bytes are complete and checked (a cache slot is then findable). */
    boolean valid;
    /** Held by the current layer step (never evicted, never refilled). */
    boolean locked;
    long lastUse;
    /** Reads of the current fill not finished yet. */
    final AtomicInteger pending = new AtomicInteger();
    volatile Throwable error;
    /** The inference thread waiting for this slot, unparked by the reader that finishes the fill. */
    volatile Thread waiter;

    Slot(int id, boolean cache, MemorySegment mem, int maxRuns) {
        this.id = id;
        this.cache = cache;
        this.mem = mem;
        this.tasks = new ExpertReader.Task[maxRuns];
        for (int i = 0; i < maxRuns; i++) {
            tasks[i] = new ExpertReader.Task(this, mem.asByteBuffer());
        }
    }

    void fail(Throwable e) {
        if (error == null) {
            error = e;
        }
    }

    void pieceDone() {
        if (pending.decrementAndGet() == 0) {
            Thread w = waiter;
            if (w != null) {
                LockSupport.unpark(w);
            }
        }
    }

    /** Waits until the fill's reads are done; returns the nanoseconds waited. */
    long awaitReads() {
        if (pending.get() == 0) {
            return 0;
        }
        long t0 = System.nanoTime();
        waiter = Thread.currentThread();
        while (pending.get() > 0) {
            LockSupport.parkNanos(this, 1_000_000);
        }
        waiter = null;
        return System.nanoTime() - t0;
    }
}
