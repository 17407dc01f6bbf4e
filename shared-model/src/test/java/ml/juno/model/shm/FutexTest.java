package ml.juno.model.shm;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link Futex}: a wait on an unchanged word sleeps until its timeout or a wake-up, not at all on a changed one. */
class FutexTest {

    @Test
    void aWaitSleeps_untilItsTimeoutOrAWakeUp() throws Exception {
        assumeTrue(Futex.AVAILABLE, "no futexes here");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment word = arena.allocate(ValueLayout.JAVA_INT);
            MemorySegment ts = arena.allocate(16, 8);
            long t0 = System.nanoTime();
            Futex.await(word, 0, 60_000_000L, ts);
            long slept = System.nanoTime() - t0;
            assertTrue(slept >= 50_000_000L && slept < 2_000_000_000L, "slept " + slept / 1000 + " µs for a 60 ms timeout");

            t0 = System.nanoTime();
            Futex.await(word, 1, 2_000_000_000L, ts); // the word holds 0, not 1: at once
            assertTrue(System.nanoTime() - t0 < 500_000_000L);

            MemorySegment ts2 = arena.allocate(16, 8);
            long start = System.nanoTime();
            CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
                Futex.await(word, 0, 5_000_000_000L, ts2);
                return System.nanoTime();
            });
            Thread.sleep(100);
            word.set(ValueLayout.JAVA_INT, 0, 1);
            Futex.wakeAll(word);
            long woke = waiter.get(4, TimeUnit.SECONDS) - start;
            assertTrue(woke >= 90_000_000L && woke < 3_000_000_000L, "woke after " + woke / 1000 + " µs");
        }
    }
}
