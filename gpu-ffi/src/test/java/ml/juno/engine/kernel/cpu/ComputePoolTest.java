package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class ComputePoolTest {

    @Test
    void everyChunkRunsExactlyOnce_overManyJobsOfEverySize() {
        for (int threads : new int[] {1, 2, 3, 4}) {
            try (ComputePool pool = new ComputePool(threads)) {
                SplittableRandom rnd = new SplittableRandom(threads);
                for (int job = 0; job < 20_000; job++) {
                    int chunks = job % 97 == 0 ? 1 + rnd.nextInt(4096) : 1 + rnd.nextInt(9);
                    AtomicIntegerArray runs = new AtomicIntegerArray(chunks);
                    AtomicInteger badWorker = new AtomicInteger();
                    int spin = rnd.nextInt(4);
                    pool.parallelFor(chunks, (c, w) -> {
                        runs.incrementAndGet(c);
                        if (w < 0 || w >= threads) {
                            badWorker.incrementAndGet();
                        }
                        for (int i = 0; i < spin * 50; i++) {
                            Thread.onSpinWait();
                        }
                    });
                    for (int c = 0; c < chunks; c++) {
                        assertEquals(1, runs.get(c), "threads " + threads + ", job " + job + ", chunk " + c + " of " + chunks);
                    }
                    assertEquals(0, badWorker.get());
                }
            }
        }
    }

    @Test
    void aWorkersFailureIsThrownByTheCaller_andThePoolGoesOn() {
        try (ComputePool pool = new ComputePool(2)) {
            IllegalStateException boom = new IllegalStateException("boom");
            int failures = 0;
            for (int i = 0; i < 200; i++) {
                // a chunk fails only on a worker: the caller's own chunks never do
                try {
                    pool.parallelFor(64, (c, w) -> {
                        if (w != 0) {
                            throw boom;
                        }
                        for (int k = 0; k < 2_000; k++) {
                            Thread.onSpinWait();
                        }
                    });
                } catch (IllegalStateException e) {
                    assertSame(boom, e);
                    failures++;
                }
                AtomicInteger ran = new AtomicInteger();
                pool.parallelFor(8, (c, w) -> ran.incrementAndGet());
                assertEquals(8, ran.get(), "the job after a failed one runs every chunk");
            }
            assertTrue(failures > 0, "a worker took a chunk in some of 200 jobs of 64 chunks");
        }
    }

    @Test
    void theCallersFailure_stopsFurtherClaims_andNothingRunsAfterTheThrow() throws Exception {
        try (ComputePool pool = new ComputePool(3)) {
            for (int i = 0; i < 200; i++) {
                AtomicInteger running = new AtomicInteger();
                AtomicInteger started = new AtomicInteger();
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> pool.parallelFor(10_000, (c, w) -> {
                    running.incrementAndGet();
                    started.incrementAndGet();
                    try {
                        if (w == 0) {
                            throw new IllegalArgumentException("caller's chunk " + c);
                        }
                        for (int k = 0; k < 500; k++) {
                            Thread.onSpinWait();
                        }
                    } finally {
                        running.decrementAndGet();
                    }
                }));
                assertTrue(e.getMessage().startsWith("caller's chunk"));
                assertEquals(0, running.get(), "no chunk still running once parallelFor has thrown");
                int after = started.get();
                Thread.sleep(1);
                assertEquals(after, started.get(), "no chunk starts after parallelFor has thrown");
                assertTrue(after < 10_000, "the chunks not yet claimed were not run: " + after);
            }
        }
    }

    @Test
    void tooManyChunks_areRefused() {
        try (ComputePool pool = new ComputePool(2)) {
            assertThrows(IllegalArgumentException.class, () -> pool.parallelFor(ComputePool.MAX_CHUNKS + 1, (c, w) -> {}));
            AtomicInteger ran = new AtomicInteger();
            pool.parallelFor(3, (c, w) -> ran.incrementAndGet());
            assertEquals(3, ran.get());
        }
    }

    @Test
    void onLinux_theCoreIsKnown() {
        if (System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            assertTrue(ComputePool.Cpu.available(), "sched_getcpu through FFM");
            int cpu = ComputePool.Cpu.current();
            assertTrue(cpu >= 0 && cpu < 4096, "core " + cpu);
        }
    }

    @Test
    void aWorkerOnTheCallersCore_movesOff_andKeepsItsAllowedCores() {
        if (!ComputePool.Cpu.available()) {
            return; // not Linux: nothing is moved
        }
        int cores = Runtime.getRuntime().availableProcessors(); // this thread's allowed cores
        if (cores < 2) {
            assertFalse(ComputePool.Cpu.moveOff(ComputePool.Cpu.current(), ComputePool.Cpu.scratch()),
                    "one allowed core: nowhere to go");
            return;
        }
        // Once the whole set is allowed again the scheduler may move the thread back before it looks (a busy CI
        // machine did), and it may be moved between its look and the call: the move must show in one of 20 tries.
        int tries = 0;
        boolean elsewhere = false;
        while (!elsewhere && tries++ < 20) {
            int before = ComputePool.Cpu.current();
            assertTrue(ComputePool.Cpu.moveOff(before, ComputePool.Cpu.scratch()), "moved off core " + before);
            elsewhere = ComputePool.Cpu.current() != before;
        }
        assertTrue(elsewhere, "on another core right after the move in none of 20 tries");
        assertEquals(cores, Runtime.getRuntime().availableProcessors(), "every allowed core allowed again");
    }

    /**
     * A pool told to rest ({@link ComputePool#rest}, here from a chunk of the job) has its worker park at its first poll
     * after the job, where it otherwise polls 64 times at least (its first look at which core it is on) and up to 16,384;
     * the next job wakes it and runs every chunk once. Checked on 20 jobs the worker took part in (with two allowed cores
     * or more: on one, every chunk is the caller's).
     */
    @Test
    void aRestingPoolsWorkerParksAtItsFirstPoll_andTheNextJobWakesIt() {
        try (ComputePool pool = new ComputePool(2)) {
            int checked = 0;
            for (int i = 0; i < 5_000 && checked < 20; i++) {
                AtomicIntegerArray runs = new AtomicIntegerArray(64);
                java.util.concurrent.atomic.AtomicBoolean workerRan = new java.util.concurrent.atomic.AtomicBoolean();
                pool.parallelFor(64, (c, w) -> {
                    runs.incrementAndGet(c);
                    if (w == 1) {
                        workerRan.set(true);
                    }
                    if (c == 0) {
                        pool.rest();
                    }
                    for (int k = 0; k < 500; k++) {
                        Thread.onSpinWait();
                    }
                });
                for (int c = 0; c < 64; c++) {
                    assertEquals(1, runs.get(c), "job " + i + ", chunk " + c);
                }
                if (workerRan.get()) {
                    while (pool.parkedWorkers() < 1) {
                        java.util.concurrent.locks.LockSupport.parkNanos(5_000);
                    }
                    assertEquals(1, pool.pollsBeforePark(1), "job " + i + ": polls before the worker parked");
                    checked++;
                }
            }
            if (Runtime.getRuntime().availableProcessors() >= 2) { // on one allowed core the worker leaves every job to the caller
                assertEquals(20, checked, "jobs the worker took part in");
            }
        }
    }
}
