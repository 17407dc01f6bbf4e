package ml.juno.engine.kernel.cpu;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed team of compute threads with a low-overhead parallel-for. The calling thread is member 0 of the team; the
 * others are daemon threads that spin briefly between jobs and then park. A job is a {@link Body} object the caller
 * keeps and reuses (no per-call task objects); its chunks are handed out through one atomic counter. Which thread runs
 * which chunk varies, so bodies must make each chunk's result independent of that.
 */
public final class ComputePool implements AutoCloseable {

    /** A parallel job: {@code run(chunk, worker)} is called once per chunk, {@code worker < threads()}. */
    public interface Body {
        void run(int chunk, int worker);
    }

    private static final int SPIN_LIMIT = 1 << 14;

    private final Thread[] workers;
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicInteger finished = new AtomicInteger();
    private final AtomicIntegerArray parked;
    private volatile int generation;
    private volatile boolean closed;
    private volatile Body body;
    private volatile int chunks;

    public ComputePool(int threads) {
        if (threads <= 0) {
            throw new IllegalArgumentException("threads must be positive: " + threads);
        }
        workers = new Thread[threads - 1];
        parked = new AtomicIntegerArray(Math.max(1, threads - 1));
        for (int i = 0; i < workers.length; i++) {
            int id = i + 1;
            workers[i] = Thread.ofPlatform().daemon().name("juno-compute-" + id).unstarted(() -> workLoop(id));
            workers[i].start();
        }
    }

    /** Threads in the team, the caller included. */
    public int threads() {
        return workers.length + 1;
    }

    /** Runs {@code body} for chunks {@code 0..chunks-1} on the team and returns when all are done. */
    public void parallelFor(int chunks, Body body) {
        if (chunks <= 0) {
            return;
        }
        if (chunks == 1 || workers.length == 0) {
            for (int c = 0; c < chunks; c++) {
                body.run(c, 0);
            }
            return;
        }
        this.body = body;
        this.chunks = chunks;
        next.set(0);
        finished.set(0);
        generation = generation + 1;
        for (int i = 0; i < workers.length; i++) {
            if (parked.get(i) != 0) {
                LockSupport.unpark(workers[i]);
            }
        }
        drain(body, chunks, 0);
        int spins = 0;
        while (finished.get() < workers.length) {
            if (++spins > SPIN_LIMIT) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
        this.body = null;
    }

    private void drain(Body b, int n, int worker) {
        for (int c = next.getAndIncrement(); c < n; c = next.getAndIncrement()) {
            b.run(c, worker);
        }
    }

    private void workLoop(int id) {
        int seen = 0;
        while (true) {
            int spins = 0;
            int g;
            while ((g = generation) == seen) {
                if (closed) {
                    return;
                }
                if (++spins < SPIN_LIMIT) {
                    Thread.onSpinWait();
                } else {
                    // Dekker handshake with parallelFor: publish "parked", then re-check the generation.
                    parked.set(id - 1, 1);
                    if (generation == seen && !closed) {
                        LockSupport.park(this);
                    }
                    parked.set(id - 1, 0);
                }
            }
            seen = g;
            try {
                drain(body, chunks, id);
            } finally {
                finished.incrementAndGet();
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Thread w : workers) {
            LockSupport.unpark(w);
        }
    }
}
