package ml.juno.engine.kernel.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import ml.juno.engine.kernel.Libc;

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
    /** Each worker's polls before it last parked between jobs (its own to write; published by {@link #parked}). */
    private final int[] pollsBeforePark;
    /** The core each worker claimed its last chunk on ({@code -1}: unknown). */
    private final AtomicIntegerArray workerCpu;
    private volatile boolean closed;
    /** Set by {@link #rest}, cleared by the next job: waiting workers park at once instead of spinning. */
    private volatile boolean resting;
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
        pollsBeforePark = new int[Math.max(1, threads - 1)];
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
        if (resting) {
            resting = false; // before the job is published, as body is; read first: no store (and fence) for most jobs
        }
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
        for (long s; own == null && (s = claim(start)) >= 0; ) {
            mine++;
            try {
                body.run(next(s), 0);
            } catch (Throwable t) {
                own = t;
            }
        }
        int claimed = own != null ? closeClaims(start) : chunks;
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
     * Claims the next chunk of the job that state word {@code job} belongs to: the state word before the claim (its
     * {@link #next} is the chunk), or {@code -1} when that job has no chunk left (or is no longer the current job).
     */
    private long claim(long job) {
        while (true) {
            long s = state.get();
            if (job(s) != job(job) || !open(s)) {
                return -1;
            }
            if (state.compareAndSet(s, s + 1)) {
                return s;
            }
        }
    }

    /** Stops further claims of the current job; returns how many of its chunks were claimed. */
    private int closeClaims(long job) {
        while (true) {
            long s = state.get();
            if (!open(s) || state.compareAndSet(s, job(s) | chunks(s))) {
                return Math.min(next(s), chunks(s));
            }
        }
    }

    /** The job a state word belongs to (generation and chunk count). */
    private static long job(long s) {
        return s & ~CHUNK_MASK;
    }

    private static int chunks(long s) {
        return (int) ((s >>> CHUNK_BITS) & CHUNK_MASK);
    }

    private static int next(long s) {
        return (int) (s & CHUNK_MASK);
    }

    /** Whether the job has a chunk left to claim. */
    private static boolean open(long s) {
        return next(s) < chunks(s);
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
        MemorySegment affinity = Cpu.scratch();
        long seen = job(state.get());
        while (true) {
            int spins = 0;
            long s;
            while (job(s = state.get()) == seen || !open(s)) {
                seen = job(s);
                if (closed) {
                    return;
                }
                if (++spins < SPIN_LIMIT && !resting && (spins % CPU_CHECK_EVERY != 0 || !onCallersCore())) {
                    Thread.onSpinWait();
                } else {
                    pollsBeforePark[id - 1] = spins;
                    park(id, seen);
                    spins = 0;
                }
            }
            if (onCallersCore() && !Cpu.moveOff(callerCpu, affinity)) {
                // woken onto the caller's core and no other core to go to: leave the job to the caller
                seen = job(s);
                park(id, seen);
                continue;
            }
            runClaims(s, id);
        }
    }

    /** Parks worker {@code id} until a job after {@code seen} starts (Dekker handshake with parallelFor's unpark). */
    private void park(int id, long seen) {
        parked.set(id - 1, 1);
        if (job(state.get()) == seen && !closed) {
            LockSupport.park(this);
        }
        parked.set(id - 1, 0);
    }

    /** Claims and runs chunks of the job that state word {@code job} belongs to, until none is left. */
    private void runClaims(long job, int id) {
        workerCpu.set(id - 1, Cpu.current());
        for (long s; (s = claim(job)) >= 0; ) {
            // The claimed chunk keeps the job unfinished, so body is still this job's.
            try {
                body.run(next(s), id);
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

    /**
     * The caller has no job for a while: workers waiting for one park at their next poll instead of spinning out their
     * {@code SPIN_LIMIT} polls; the next {@link #parallelFor} wakes them as it wakes any parked worker, and ends the
     * rest. Called during a job (from a chunk), it applies once the job is done.
     */
    public void rest() {
        if (REST && workers.length > 0) {
            resting = true;
        }
    }

    private static final boolean REST = !"false".equals(System.getProperty("juno.compute.rest"));

    /** Workers parked now (for tests). */
    int parkedWorkers() {
        int n = 0;
        for (int i = 0; i < workers.length; i++) {
            n += parked.get(i);
        }
        return n;
    }

    /** How many times worker {@code id} polled for a job before it last parked between jobs (for tests; read after it parked). */
    int pollsBeforePark(int id) {
        return pollsBeforePark[id - 1];
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

    /**
     * Which core a thread is on, and moving it off one ({@link Libc}'s {@code sched_*} calls; Linux only, and not with
     * {@code -Djuno.compute.cpu-aware=false}, where {@link #current} is {@code -1} and nothing moves).
     */
    static final class Cpu {
        private static final long MASK_BYTES = 128; // cpu_set_t: 1,024 cores
        private static final boolean AWARE = !"false".equals(System.getProperty("juno.compute.cpu-aware")) && Libc.linux()
                && works();

        private Cpu() {}

        static boolean available() {
            return AWARE;
        }

        /** The core the calling thread runs on, or {@code -1}. */
        static int current() {
            if (!AWARE) {
                return -1;
            }
            try {
                return (int) Libc.schedGetcpu().invokeExact();
            } catch (Throwable t) {
                return -1;
            }
        }

        /** Room for the two CPU masks {@link #moveOff} uses, or null where threads are not moved. */
        static MemorySegment scratch() {
            return AWARE ? Arena.ofAuto().allocate(2 * MASK_BYTES, 8) : null;
        }

        /**
         * Moves the calling thread to a core of its allowed set other than {@code cpu}, then allows it the whole set
         * again (the thread stays where it was moved until the scheduler moves it). The scheduler wakes a thread on the
         * waker's core when no core looks idle and then keeps two threads that alternate there, both cache-hot, while
         * the other core idles; this is the way out. False where there is no other core (or no such call).
         */
        static boolean moveOff(int cpu, MemorySegment scratch) {
            if (scratch == null || cpu < 0) {
                return false;
            }
            try {
                MemorySegment allowed = scratch.asSlice(0, MASK_BYTES);
                MemorySegment one = scratch.asSlice(MASK_BYTES, MASK_BYTES);
                MethodHandle set = Libc.schedSetaffinity();
                if ((int) Libc.schedGetaffinity().invokeExact(0, MASK_BYTES, allowed) != 0) {
                    return false;
                }
                int target = -1;
                for (int i = 0; i < MASK_BYTES * 8 && target < 0; i++) {
                    if (i != cpu && (allowed.get(ValueLayout.JAVA_BYTE, i >>> 3) & (1 << (i & 7))) != 0) {
                        target = i;
                    }
                }
                if (target < 0) {
                    return false;
                }
                one.fill((byte) 0);
                one.set(ValueLayout.JAVA_BYTE, target >>> 3, (byte) (1 << (target & 7)));
                boolean moved = (int) set.invokeExact(0, MASK_BYTES, one) == 0;
                return (int) set.invokeExact(0, MASK_BYTES, allowed) == 0 && moved;
            } catch (Throwable t) {
                return false;
            }
        }

        /** Whether the calls link here: their holder initialises (no native access, or a symbol missing: not). */
        private static boolean works() {
            try {
                Libc.schedGetcpu(); // one holder looks all three up
                return true;
            } catch (Throwable t) {
                return false;
            }
        }
    }
}
