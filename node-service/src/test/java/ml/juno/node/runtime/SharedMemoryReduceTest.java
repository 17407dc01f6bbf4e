package ml.juno.node.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import ml.juno.model.wire.ActivationDtype;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Ranks of one host exchanging partials through {@link SharedMailbox}: the same bits as over the (stand-in) gRPC links,
 * with no partial on those links; a partial larger than a slot goes by gRPC; a peer whose link ends still fails the
 * wait at once; a stale inbox of a dead process is neither used nor left behind.
 */
class SharedMemoryReduceTest {
    private static long nextGroup = System.nanoTime() & 0xffff_ffffL;

    @BeforeAll
    static void needsDevShm() {
        assumeTrue(ml.juno.model.shm.ShmFiles.HOST != 0 && Files.isWritable(Path.of("/dev/shm")), "no /dev/shm here: shared memory is off");
    }

    private static List<float[]> partials(int n, int size, long seed) {
        List<float[]> p = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            p.add(RankReduceTest.random(seed * 10 + r, size));
        }
        return p;
    }

    @Test
    void sharedMemory_givesTheSameBitsAsTheLinks_andSendsNoPartialOnThem() {
        for (ActivationDtype d : ActivationDtype.values()) {
            for (int n : new int[] {2, 3}) {
                AtomicLong grpcShm = new AtomicLong();
                AtomicLong grpcOnly = new AtomicLong();
                List<RankReduce> shm = RankReduceTest.ranks(n, d, Duration.ofSeconds(5), nextGroup++, 1 << 16, grpcShm);
                List<RankReduce> links = RankReduceTest.ranks(n, d, Duration.ofSeconds(5), nextGroup++, 0, grpcOnly);
                try {
                    assertTrue(shm.getFirst().sharedMemory());
                    for (int step = 1; step <= 3; step++) {
                        for (int index = 0; index < 7; index++) { // more than SLOTS: slots are reused
                            List<float[]> p = partials(n, 4 * 64, step * 100L + index);
                            List<float[]> a = RankReduceTest.reduce(shm, step, index, p, 4, 64);
                            List<float[]> b = RankReduceTest.reduce(links, step, index, p, 4, 64);
                            for (int r = 0; r < n; r++) {
                                assertArrayEquals(b.get(r), a.get(r), d + ", " + n + " ranks, rank " + r + ", step " + step + "." + index);
                                assertArrayEquals(a.get(0), a.get(r), d + ": ranks differ");
                            }
                        }
                    }
                    assertEquals(0, grpcShm.get(), d + ": partials went by gRPC although every peer is on this host");
                    assertEquals(3L * 7 * n * (n - 1), grpcOnly.get());
                    assertEquals(3L * 7 * (n - 1), shm.getFirst().sharedMemoryPartials());
                } finally {
                    shm.forEach(RankReduce::close);
                    links.forEach(RankReduce::close);
                }
            }
        }
    }

    /** Through shared memory an all-reduce allocates nothing (the partials are encoded and read into buffers kept for the next). */
    @Test
    void sharedMemoryAllReduces_allocateNothing() throws Exception {
        var mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        assumeTrue(mx.isThreadAllocatedMemorySupported() && mx.isThreadAllocatedMemoryEnabled(), "no per-thread allocation counter");
        for (ActivationDtype d : ActivationDtype.values()) {
            List<RankReduce> ranks = RankReduceTest.ranks(2, d, Duration.ofSeconds(10), nextGroup++, 1 << 16, new AtomicLong());
            try {
                long[] allocated = new long[2];
                List<CompletableFuture<Void>> runs = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    int rank = r;
                    runs.add(CompletableFuture.runAsync(() -> {
                        float[] x = RankReduceTest.random(rank, 4 * 256);
                        float[] work = new float[x.length];
                        int warm = 2_000;
                        int measured = 2_000;
                        long before = 0;
                        for (int i = 0; i < warm + measured; i++) {
                            if (i == warm) {
                                before = mx.getCurrentThreadAllocatedBytes();
                            }
                            System.arraycopy(x, 0, work, 0, x.length);
                            ranks.get(rank).allReduce(1 + i / 8, i % 8, work, 4, 256, 0L, () -> false);
                        }
                        allocated[rank] = mx.getCurrentThreadAllocatedBytes() - before;
                    }, RankReduceTest.THREADS));
                }
                CompletableFuture.allOf(runs.toArray(CompletableFuture[]::new)).get(60, java.util.concurrent.TimeUnit.SECONDS);
                for (int r = 0; r < 2; r++) {
                    // a few hundred bytes at most (a JIT-time allocation); the old path took 2+ KiB per all-reduce
                    assertTrue(allocated[r] < 16_384, d + ": rank " + r + " allocated " + allocated[r] + " bytes in 2,000 all-reduces");
                }
                assertEquals(4_000, ranks.getFirst().sharedMemoryPartials());
            } finally {
                ranks.forEach(RankReduce::close);
            }
        }
    }

    @Test
    void aPartialLargerThanASlot_goesByTheLinks_withTheSameResult() {
        AtomicLong grpc = new AtomicLong();
        List<RankReduce> ranks = RankReduceTest.ranks(2, ActivationDtype.FLOAT32, Duration.ofSeconds(5), nextGroup++, 1024, grpc);
        try {
            List<float[]> small = partials(2, 64, 1);
            RankReduceTest.reduce(ranks, 1, 0, small, 1, 64); // 256 bytes: shared memory
            assertEquals(0, grpc.get());
            List<float[]> big = partials(2, 8192, 2); // 32 KB: more than a 4 KB slot
            List<float[]> got = RankReduceTest.reduce(ranks, 1, 1, big, 4, 2048);
            assertEquals(2, grpc.get());
            float[] want = big.get(0).clone();
            for (int k = 0; k < want.length; k++) {
                want[k] += big.get(1)[k];
            }
            assertArrayEquals(want, got.get(0));
            assertArrayEquals(want, got.get(1));
        } finally {
            ranks.forEach(RankReduce::close);
        }
    }

    @Test
    void aPeerWhoseLinkEnds_failsTheSharedMemoryWaitAtOnce_andATimeoutStillBounds() {
        List<RankReduce> ranks = RankReduceTest.ranks(2, ActivationDtype.FLOAT32, Duration.ofMillis(300), nextGroup++, 1 << 12, new AtomicLong());
        try {
            RankReduce rank0 = ranks.getFirst();
            long t0 = System.nanoTime();
            var silent = assertThrows(IllegalStateException.class, () -> rank0.allReduce(1, 0, new float[2], 1, 2, System.nanoTime(), () -> false));
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(silent.getMessage().contains("no partial from rank 1"), silent.getMessage());
            assertTrue(ms >= 300 && ms < 2000, ms + " ms");

            long stepStart = System.nanoTime();
            CompletableFuture<Void> later = CompletableFuture.runAsync(() -> {
                RankReduceTest.sleep(100);
                rank0.ended(1, "the link to rank 1 broke: UNAVAILABLE");
            }, RankReduceTest.THREADS);
            t0 = System.nanoTime();
            var gone = assertThrows(IllegalStateException.class, () -> rank0.allReduce(2, 0, new float[2], 1, 2, stepStart, () -> false));
            ms = (System.nanoTime() - t0) / 1_000_000;
            later.join();
            assertEquals("all-reduce 0 of step 2: the link to rank 1 broke: UNAVAILABLE", gone.getMessage());
            assertTrue(ms >= 90 && ms < 290, "failed " + ms + " ms into the wait, not at the timeout");
        } finally {
            ranks.forEach(RankReduce::close);
        }
    }

    @Test
    void anInboxOfADeadProcess_isNotAttached_andIsSweptAway() throws Exception {
        long group = nextGroup++;
        Path stale = SharedMailbox.pathOf(group, 1);
        long deadPid = new ProcessBuilder("true").start().onExit().get().pid();
        try (SharedMailbox live = SharedMailbox.create(group, 1, 2, ml.juno.model.shm.ShmFiles.slotBytes(256))) {
            assertTrue(SharedMailbox.attach(group, 1, 2) != null, "a live inbox is attached");
            assertNull(SharedMailbox.attach(group, 1, 3), "an inbox of another world size is not");
            assertNull(SharedMailbox.attach(group, 0, 2), "nor one that is not there");
            // the owner's pid field now names a process that has exited
            try (FileChannel ch = FileChannel.open(stale, StandardOpenOption.WRITE)) {
                ch.write(ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(0, deadPid), 8);
            }
            assertNull(SharedMailbox.attach(group, 1, 2), "an inbox whose owner is dead is not attached");
            assertTrue(ml.juno.model.shm.ShmFiles.sweep() >= 1);
            assertFalse(Files.exists(stale), "the dead process's inbox is removed");
        }
    }

    @Test
    void aPeerThatReloads_getsThePartialsSentRightAfter_byItsNewInbox() {
        long group = nextGroup++;
        AtomicLong grpc = new AtomicLong();
        List<RankReduce> ranks = RankReduceTest.ranks(2, ActivationDtype.FLOAT32, Duration.ofSeconds(5), group, 1 << 12, grpc);
        try {
            List<float[]> p = partials(2, 8, 1);
            RankReduceTest.reduce(ranks, 1, 0, p, 1, 8);
            long before = grpc.get();
            ranks.get(1).close(); // rank 1 reloads its slice: a new inbox at once, well within rank 0's 50 ms re-check
            RankReduce fresh = new RankReduce(new ml.juno.model.shard.ShardLoad.Tensor(1, 2, ranks.get(1).shard().peers(), group, 0),
                    ml.juno.model.wire.ActivationCodec.of(ActivationDtype.FLOAT32, java.nio.ByteOrder.LITTLE_ENDIAN), Duration.ofSeconds(5), 1 << 12);
            ranks.set(1, fresh);
            RankReduceTest.connect(fresh, ranks, group, grpc);
            for (int step = 2; step <= 4; step++) {
                List<float[]> q = partials(2, 8, step);
                List<float[]> a = RankReduceTest.reduce(ranks, step, 0, q, 1, 8);
                float[] want = new float[8];
                for (int k = 0; k < 8; k++) {
                    want[k] = q.get(0)[k] + q.get(1)[k];
                }
                assertArrayEquals(want, a.get(0), "step " + step);
                assertArrayEquals(want, a.get(1), "step " + step);
            }
            assertEquals(before + 1, grpc.get(), "rank 0's first partial after the reload by gRPC, then the new inbox");
        } finally {
            ranks.forEach(RankReduce::close);
        }
    }

    @Test
    void closing_removesTheInbox() {
        long group = nextGroup++;
        List<RankReduce> ranks = RankReduceTest.ranks(2, ActivationDtype.FLOAT16, Duration.ofSeconds(5), group, 1 << 12, new AtomicLong());
        assertTrue(Files.exists(SharedMailbox.pathOf(group, 0)));
        ranks.forEach(RankReduce::close);
        assertFalse(Files.exists(SharedMailbox.pathOf(group, 0)));
        assertFalse(Files.exists(SharedMailbox.pathOf(group, 1)));
    }
}
