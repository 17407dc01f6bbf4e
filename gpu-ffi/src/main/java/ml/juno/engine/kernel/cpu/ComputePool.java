package ml.juno.engine.kernel.cpu;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed team of compute threads with a low-overhead parallel-for. The calling thread is member 0 of the team; the
 * others are daemon threads that spin briefly between jobs and then park. A job is a {@link Body} object the caller
 * keeps and reuses (no per-call task objects); its chunks are claimed one at a time from one atomic word that holds
 * the job's generation, its chunk count and the next chunk. Which thread runs which chunk varies, so bodies must make
 * each chunk's result independent of that.
 *
 * <p>A job waits only for the chunks that were claimed: a worker that is not running when the job starts (parked,
 * descheduled, or sharing the caller's core) takes nothing, and the caller runs the rest itself instead of waiting for
 * it to wake and acknowledge. Where the OS tells which core a thread is on ({@code sched_getcpu}, Linux), a worker
 * woken onto the caller's core moves itself to another core it may use ({@link Cpu#moveOff}; where there is none it
 * leaves the job to the caller), a worker that finds itself there between jobs parks instead of spinning, and the
 * caller gives the core to a worker of its own core that holds a chunk instead of spinning against it: two threads of
 * one team alternating on one core while the other core idles (the scheduler wakes a thread on the waker's core when
 * no core looks idle, and keeps two such threads where they are, both having just run) is what made several
 * processes' teams sharing two cores slow.
 */
public final class ComputePool implements AutoCloseable {

    /** A parallel job: {@code run(chunk, worker)} is called once per chunk, {@code worker < threads()}. */
    public interface Body {
        void run(int chunk, int worker);
    }

    /** Most chunks in one job (the state word keeps the count and the next chunk in 20 bits each). */
    public static final int MAX_CHUNKS = (1 << 20) - 1;

    private static final int SPIN_LIMIT = 1 << 14;
    /** Spins between two looks at which core a waiting thread is on. */
    private static final int CPU_CHECK_EVERY = 64;
    private static final int CHUNK_BITS = 20;
    private static final long CHUNK_MASK = (1L << CHUNK_BITS) - 1;

    private final Thread[] workers;
    /** generation (24 bits) | chunks (20) | next chunk (20): one CAS claims a chunk of exactly this job. */
    private final AtomicLong state = new AtomicLong();
    /** Chunks of the current job finished (run or failed). */
    private final AtomicInteger done = new AtomicInteger();
    private final AtomicIntegerArray parked;
    /** The core each worker claimed its last chunk on ({@code -1}: unknown). */
    private final AtomicIntegerArray workerCpu;
    private volatile boolean closed;
    private volatile Body body;
    /** The core the caller started the last job on ({@code -1}: unknown). */
    private volatile int callerCpu = -1;
    /** The first failure of a worker's chunk in the current job, rethrown by the caller. */
    private volatile Throwable failure;
    private int generation; // the caller's alone

    public ComputePool(int threads) {
        if (threads <= 0) {
            throw new IllegalArgumentException("threads must be positive: " + threads);
        }
        workers = new Thread[threads - 1];
        parked = new AtomicIntegerArray(Math.max(1, threads - 1));
        workerCpu = new AtomicIntegerArray(Math.max(1, threads - 1));
        for (int i = 0; i < workers.length; i++) {
            int id = i + 1;
            workerCpu.set(i, -1);
            workers[i] = Thread.ofPlatform().daemon().name("juno-compute-" + id).unstarted(() -> workLoop(id));
            workers[i].start();
        }
    }

    /** Threads in the team, the caller included. */
    public int threads() {
        return workers.length + 1;
    }

    /**
     * Runs {@code body} for chunks {@code 0..chunks-1} on the team and returns when all are done. A chunk's exception
     * (the caller's or a worker's) is thrown here once no chunk of the job is running any more; chunks not yet claimed
     * when the caller's own chunk failed are not run.
     */
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
        if (chunks > MAX_CHUNKS) {
            throw new IllegalArgumentException("at most " + MAX_CHUNKS + " chunks in one job: " + chunks);
        }
        this.body = body;
        this.failure = null;
        done.set(0);
        int me = Cpu.current();
        callerCpu = me;
        generation = (generation + 1) & 0xFFFFFF;
        long start = ((long) generation << (2 * CHUNK_BITS)) | ((long) chunks << CHUNK_BITS);
        state.set(start); // publishes body, failure and done to the workers
        for (int i = 0; i < workers.length; i++) {
            if (parked.get(i) != 0) {
                LockSupport.unpark(workers[i]);
            }
        }
        int mine = 0;
        Throwable own = null;
        long s;
        while ((s = claim(start)) >= 0) {
            try {
                body.run((int) (s & CHUNK_MASK), 0);
            } catch (Throwable t) {
                own = t;
                mine++;
                break;
            }
            mine++;
        }
        int claimed;
        if (own != null) {
            claimed = closeClaims(start);
        } else {
            claimed = chunks;
        }
        done.addAndGet(mine);
        awaitDone(claimed, me);
        this.body = null;
        Throwable failed = own != null ? own : failure;
        if (failed != null) {
            this.failure = null;
            if (failed instanceof RuntimeException r) {
                throw r;
            }
            if (failed instanceof Error e) {
                throw e;
            }
            throw new IllegalStateException("a compute chunk failed", failed);
        }
    }

    /**
     * Claims the next chunk of the job whose state started as {@code start}: the state word before the claim, or
     * {@code -1} when that job has no chunk left (or is no longer the current job).
     */
    private long claim(long start) {
        long jobBits = start & ~CHUNK_MASK;
        int chunks = (int) ((start >>> CHUNK_BITS) & CHUNK_MASK);
        while (true) {
            long s = state.get();
            if ((s & ~CHUNK_MASK) != jobBits || (s & CHUNK_MASK) >= chunks) {
                return -1;
            }
            if (state.compareAndSet(s, s + 1)) {
                return s;
            }
        }
    }

    /** Stops further claims of the current job; returns how many of its chunks were claimed. */
    private int closeClaims(long start) {
        int chunks = (int) ((start >>> CHUNK_BITS) & CHUNK_MASK);
        while (true) {
            long s = state.get();
            int next = (int) (s & CHUNK_MASK);
            if (next >= chunks || state.compareAndSet(s, (s & ~CHUNK_MASK) | chunks)) {
                return Math.min(next, chunks);
            }
        }
    }

    /** Waits until {@code claimed} chunks are done, giving the core to a worker of this core that holds one. */
    private void awaitDone(int claimed, int me) {
        int spins = 0;
        while (done.get() < claimed) {
            if (++spins > SPIN_LIMIT || (me >= 0 && spins % CPU_CHECK_EVERY == 0 && sharesCore(me))) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
    }

    private boolean sharesCore(int cpu) {
        for (int i = 0; i < workers.length; i++) {
            if (workerCpu.get(i) == cpu) {
                return true;
            }
        }
        return false;
    }

    private void workLoop(int id) {
        java.lang.foreign.MemorySegment affinity = Cpu.scratch();
        long seen = state.get() & ~CHUNK_MASK;
        while (true) {
            int spins = 0;
            long s;
            while (((s = state.get()) & ~CHUNK_MASK) == seen || ((s & CHUNK_MASK) >= ((s >>> CHUNK_BITS) & CHUNK_MASK))) {
                seen = s & ~CHUNK_MASK;
                if (closed) {
                    return;
                }
                ++spins;
                if (spins < SPIN_LIMIT && (spins % CPU_CHECK_EVERY != 0 || !onCallersCore())) {
                    Thread.onSpinWait();
                } else {
                    // Dekker handshake with parallelFor: publish "parked", then re-check the state.
                    parked.set(id - 1, 1);
                    long now = state.get();
                    if ((now & ~CHUNK_MASK) == seen && !closed) {
                        LockSupport.park(this);
                    }
                    parked.set(id - 1, 0);
                    spins = 0;
                }
            }
            boolean colocated = onCallersCore();
            if (colocated && !Cpu.moveOff(callerCpu, affinity)) {
                // woken onto the caller's core and no other core to go to: leave the job to the caller
                seen = s & ~CHUNK_MASK;
                parked.set(id - 1, 1);
                if ((state.get() & ~CHUNK_MASK) == seen && !closed) {
                    LockSupport.park(this);
                }
                parked.set(id - 1, 0);
                continue;
            }
            runClaims(s, id);
        }
    }

    /** Claims and runs chunks of the job whose state was last seen as {@code s}, until none is left. */
    private void runClaims(long s, int id) {
        long jobBits = s & ~CHUNK_MASK;
        int chunks = (int) ((s >>> CHUNK_BITS) & CHUNK_MASK);
        workerCpu.set(id - 1, Cpu.current());
        while (true) {
            long now = state.get();
            if ((now & ~CHUNK_MASK) != jobBits || (now & CHUNK_MASK) >= chunks) {
                break;
            }
            if (!state.compareAndSet(now, now + 1)) {
                continue;
            }
            // The claimed chunk keeps the job unfinished, so body is still this job's.
            try {
                body.run((int) (now & CHUNK_MASK), id);
            } catch (Throwable t) {
                if (failure == null) {
                    failure = t;
                }
            } finally {
                done.incrementAndGet();
            }
        }
        workerCpu.set(id - 1, -1);
    }

    private boolean onCallersCore() {
        int c = callerCpu;
        return c >= 0 && Cpu.current() == c;
    }

    @Override
    public void close() {
        closed = true;
        for (Thread w : workers) {
            LockSupport.unpark(w);
        }
    }

    /** The core the calling thread runs on, from {@code sched_getcpu} where the C library has it; else {@code -1}. */
    static final class Cpu {
        private static final MethodHandle SCHED_GETCPU = lookup();

        private Cpu() {}

        static int current() {
            if (SCHED_GETCPU == null) {
                return -1;
            }
            try {
                return (int) SCHED_GETCPU.invokeExact();
            } catch (Throwable t) {
                return -1;
            }
        }

        static boolean available() {
            return SCHED_GETCPU != null;
        }

        /** Room for two CPU masks ({@link #moveOff}'s), or null where threads are not moved. */
        static java.lang.foreign.MemorySegment scratch() {
            return SCHED_GETCPU == null || SET_AFFINITY == null ? null : java.lang.foreign.Arena.ofAuto().allocate(2 * MASK_BYTES, 8);
        }

        /**
         * Moves the calling thread to a core of its allowed set other than {@code cpu}, then allows it the whole set
         * again (the thread stays where it was moved until the scheduler moves it). The scheduler wakes a thread on the
         * waker's core when no core looks idle and then keeps two threads that alternate there, both cache-hot, while
         * the other core idles; this is the way out. False where there is no other core (or no such call).
         */
        static boolean moveOff(int cpu, java.lang.foreign.MemorySegment scratch) {
            if (scratch == null || cpu < 0) {
                return false;
            }
            try {
                java.lang.foreign.MemorySegment allowed = scratch.asSlice(0, MASK_BYTES);
                java.lang.foreign.MemorySegment one = scratch.asSlice(MASK_BYTES, MASK_BYTES);
                if ((int) GET_AFFINITY.invokeExact(0, MASK_BYTES, allowed) != 0) {
                    return false;
                }
                int target = -1;
                int seen = Cpu.current();
                for (int i = 0; i < MASK_BYTES * 8 && target < 0; i++) {
                    if (i != cpu && i != seen && (allowed.get(ValueLayout.JAVA_BYTE, i >>> 3) & (1 << (i & 7))) != 0) {
                        target = i;
                    }
                }
                if (target < 0) {
                    return false;
                }
                one.fill((byte) 0);
                one.set(ValueLayout.JAVA_BYTE, target >>> 3, (byte) (1 << (target & 7)));
                boolean moved = (int) SET_AFFINITY.invokeExact(0, MASK_BYTES, one) == 0;
                int restored = (int) SET_AFFINITY.invokeExact(0, MASK_BYTES, allowed);
                return moved && restored == 0;
            } catch (Throwable t) {
                return false;
            }
        }

        private static final long MASK_BYTES = 128; // cpu_set_t: 1,024 cores
        private static final MethodHandle GET_AFFINITY = affinity("sched_getaffinity");
        private static final MethodHandle SET_AFFINITY = affinity("sched_setaffinity");

        private static MethodHandle affinity(String name) {
            if (SCHED_GETCPU == null) {
                return null;
            }
            try {
                Linker linker = Linker.nativeLinker();
                return linker.defaultLookup().find(name).map(a -> linker.downcallHandle(a, FunctionDescriptor.of(ValueLayout.JAVA_INT,
                        ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS))).orElse(null);
            } catch (Throwable t) {
                return null;
            }
        }

        private static MethodHandle lookup() {
            if ("false".equals(System.getProperty("juno.compute.cpu-aware"))) {
                return null;
            }
            try {
                Linker linker = Linker.nativeLinker();
                return linker.defaultLookup().find("sched_getcpu")
                        .map(a -> linker.downcallHandle(a, FunctionDescriptor.of(ValueLayout.JAVA_INT), Linker.Option.critical(false)))
                        .orElse(null);
            } catch (Throwable t) { // no native access, or no such call here
                return null;
            }
        }
    }
}
