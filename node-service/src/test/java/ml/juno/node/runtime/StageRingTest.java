package ml.juno.node.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.shm.Futex;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.Activations;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pipeline stages of one host passing rows through {@link StageRing}: the same bytes as over the (stand-in) gRPC link
 * with no rows on it; a full ring or rows larger than a slot go by gRPC and arrive in order all the same; a waiting
 * stage is woken by the futex, not by its periodic checks; the end of the previous stage's stream ends a wait at once.
 */
class StageRingTest {
    private static long nextGroup = System.nanoTime() & 0xffff_ffffL;

    @BeforeAll
    static void needsDevShm() {
        if (System.getProperty("os.name").equals("Linux") && System.getProperty("os.arch").equals("amd64")) {
            assertTrue(Futex.AVAILABLE, "futexes through libc's syscall() work on Linux x86-64");
        }
        assumeTrue(StageRing.enabled() && Files.isWritable(Path.of("/dev/shm")), "no /dev/shm or futexes here: shared memory is off");
    }

    private static final List<String> ADDRESSES = List.of("127.0.0.1:9100", "127.0.0.1:9101");

    /** Two stages of a new group; {@code byGrpc} counts the rows (not hellos) that went through the stand-in link. */
    private static StageLink[] stages(long shmPayload, AtomicLong byGrpc, Duration timeout) {
        long group = nextGroup++;
        StageLink[] s = new StageLink[2];
        for (int i = 0; i < 2; i++) {
            s[i] = stage(group, i, shmPayload, timeout);
        }
        s[0].connect(new RankReduce.Network() {
            @Override
            public RankReduce.Outbound open(ShardLoad.Tensor shard, RankReduce reduce) {
                throw new UnsupportedOperationException();
            }

            @Override
            public RankReduce.Outbound openStage(ShardLoad.Pipeline stage, StageLink link) {
                return new RankReduce.Outbound() {
                    @Override
                    public long send(long stepId, int index, Activations rows, boolean[] to) {
                        if (stepId >= 0) {
                            byGrpc.incrementAndGet();
                        }
                        s[1].receive(new RankReduce.Partial(group, 0, stepId, index, rows));
                        return rows.data().length;
                    }

                    @Override
                    public void close() {
                    }
                };
            }
        });
        s[1].connect(null);
        return s;
    }

    private static StageLink stage(long group, int i, long shmPayload, Duration timeout) {
        return new StageLink(new ShardLoad.Pipeline(i * 2, i * 2 + 2, ADDRESSES, i, group, 0), timeout, shmPayload);
    }

    private static Activations rows(long seed, int n, int width) {
        return Activations.encode(ActivationCodec.of(ActivationDtype.FLOAT16, ByteOrder.LITTLE_ENDIAN), RankReduceTest.random(seed, n * width), 0, n, width);
    }

    private static void close(StageLink[] s) {
        for (StageLink l : s) {
            l.close();
        }
    }

    @Test
    void rowsGoThroughSharedMemory_withTheSameBytes_andNoneOnTheLink() {
        AtomicLong grpc = new AtomicLong();
        StageLink[] s = stages(1 << 16, grpc, Duration.ofSeconds(5));
        try {
            assertTrue(s[1].sharedMemory());
            assertFalse(s[0].sharedMemory(), "the first stage takes tokens from the coordinator, not rows");
            for (long step = 1; step <= 3 * StageRing.SLOTS; step++) { // the ring wraps around several times
                for (int micro = 0; micro < 2; micro++) {
                    Activations sent = rows(step * 10 + micro, 1 + micro, 64);
                    assertEquals(sent.data().length, s[0].send(step, micro, sent));
                    Activations got = s[1].take(step, micro, System.nanoTime(), () -> false);
                    assertEquals(sent.rows(), got.rows());
                    assertEquals(sent.cols(), got.cols());
                    assertEquals(sent.dtype(), got.dtype());
                    assertArrayEquals(sent.data(), got.data());
                }
            }
            assertEquals(0, grpc.get(), "no rows on the gRPC link");
            assertEquals(6L * StageRing.SLOTS, s[0].sharedMemoryMessages());
        } finally {
            close(s);
        }
    }

    @Test
    void aFullRingAndRowsLargerThanASlot_goByTheLink_andArriveInOrder() {
        AtomicLong grpc = new AtomicLong();
        StageLink[] s = stages(4096, grpc, Duration.ofSeconds(5));
        try {
            int n = StageRing.SLOTS + 4;
            List<Activations> sent = new ArrayList<>();
            for (int step = 1; step <= n; step++) { // nobody reads yet: the ring fills, the rest go by gRPC
                Activations a = rows(step, 1, 64);
                sent.add(a);
                s[0].send(step, 0, a);
            }
            assertEquals(4, grpc.get());
            Activations big = rows(99, 64, 64); // 8 KiB: larger than a slot of this ring
            s[0].send(n + 1, 0, big);
            assertEquals(5, grpc.get());
            sent.add(big);
            for (int step = 1; step <= n + 1; step++) {
                assertArrayEquals(sent.get(step - 1).data(), s[1].take(step, 0, System.nanoTime(), () -> false).data(), "step " + step);
            }
        } finally {
            close(s);
        }
    }

    @Test
    void rowsOfAStepThatFailed_areSkipped() {
        StageLink[] s = stages(1 << 16, new AtomicLong(), Duration.ofSeconds(5));
        try {
            s[0].send(5, 0, rows(5, 1, 64));
            s[0].send(5, 1, rows(51, 1, 64)); // step 5 failed at the next stage before it took these
            Activations six = rows(6, 1, 64);
            s[0].send(6, 0, six);
            assertArrayEquals(six.data(), s[1].take(6, 0, System.nanoTime(), () -> false).data());
        } finally {
            close(s);
        }
    }

    @Test
    void aWaitingStage_isWokenByTheRows_notByItsPeriodicChecks() throws Exception {
        StageLink[] s = stages(1 << 16, new AtomicLong(), Duration.ofSeconds(5));
        try {
            long[] latency = new long[15];
            for (int i = 0; i < latency.length; i++) {
                long step = i + 1;
                CompletableFuture<Long> took = CompletableFuture.supplyAsync(() -> {
                    s[1].take(step, 0, System.nanoTime(), () -> false);
                    return System.nanoTime();
                });
                Thread.sleep(5); // the receiver is asleep on the futex by now (it spins 30 µs)
                long sentAt = System.nanoTime();
                s[0].send(step, 0, rows(step, 1, 64));
                latency[i] = took.get(5, TimeUnit.SECONDS) - sentAt;
            }
            Arrays.sort(latency);
            // a wait that missed its wake-up sleeps out its 20 ms check interval
            assertTrue(latency[latency.length / 2] < 10_000_000L, "median wake-up " + latency[latency.length / 2] / 1000 + " µs");
        } finally {
            close(s);
        }
    }

    @Test
    void theEndOfThePreviousStagesStream_endsTheWaitAtOnce_andATimeoutStillBounds() throws Exception {
        StageLink[] s = stages(1 << 16, new AtomicLong(), Duration.ofSeconds(30));
        try {
            long t0 = System.nanoTime();
            CompletableFuture<Activations> waiting = CompletableFuture.supplyAsync(() -> s[1].take(1, 0, t0, () -> false));
            Thread.sleep(50);
            s[1].ended(0, "the stream from rank 0 ended");
            var e = assertThrows(java.util.concurrent.ExecutionException.class, () -> waiting.get(5, TimeUnit.SECONDS));
            assertTrue(e.getCause().getMessage().contains("the stream from rank 0 ended"), e.getCause().getMessage());
            assertTrue(System.nanoTime() - t0 < 5_000_000_000L);
        } finally {
            close(s);
        }
        StageLink[] t = stages(1 << 16, new AtomicLong(), Duration.ofMillis(150));
        try {
            long t0 = System.nanoTime();
            var e = assertThrows(IllegalStateException.class, () -> t[1].take(1, 0, t0, () -> false));
            assertTrue(e.getMessage().contains("no rows from stage 0"), e.getMessage());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(ms >= 140 && ms < 2_000, ms + " ms");
            var c = assertThrows(IllegalStateException.class, () -> t[1].take(1, 0, System.nanoTime(), () -> true));
            assertTrue(c.getMessage().contains("cancelled"), c.getMessage());
        } finally {
            close(t);
        }
    }

    @Test
    void aNextStageThatReloads_getsTheRowsSentRightAfter_byItsNewInbox() {
        AtomicLong grpc = new AtomicLong();
        StageLink[] s = stages(1 << 16, grpc, Duration.ofSeconds(5));
        long group = nextGroup - 1;
        try {
            Activations a = rows(1, 1, 64);
            s[0].send(1, 0, a);
            assertArrayEquals(a.data(), s[1].take(1, 0, System.nanoTime(), () -> false).data());
            s[1].close(); // the next stage reloads its shard: a new link and inbox, at once
            s[1] = stage(group, 1, 1 << 16, Duration.ofSeconds(5));
            for (int step = 2; step <= 4; step++) {
                Activations b = rows(step, 1, 64);
                s[0].send(step, 0, b); // the first goes by gRPC (the old ring is closed); then the new ring is found
                assertArrayEquals(b.data(), s[1].take(step, 0, System.nanoTime(), () -> false).data(), "step " + step);
            }
            assertEquals(1, grpc.get(), "one message by gRPC, while the sender looked for the new inbox");
        } finally {
            close(s);
        }
    }

    @Test
    void aNodesStagesUseTheirRingsUnlessTurnedOff() {
        String before = System.getProperty("juno.stage.shm");
        try {
            System.clearProperty("juno.stage.shm");
            if (System.getenv("JUNO_STAGE_SHM") == null) {
                assertTrue(StageRing.wanted(), "on by default");
            }
            System.setProperty("juno.stage.shm", "0");
            assertFalse(StageRing.wanted());
            System.setProperty("juno.stage.shm", "false");
            assertFalse(StageRing.wanted());
            System.setProperty("juno.stage.shm", "off");
            assertFalse(StageRing.wanted());
            System.setProperty("juno.stage.shm", "1");
            assertTrue(StageRing.wanted());
        } finally {
            if (before == null) {
                System.clearProperty("juno.stage.shm");
            } else {
                System.setProperty("juno.stage.shm", before);
            }
        }
    }

    @Test
    void closing_removesTheInbox_andAStageWithoutSharedMemoryUsesTheLink() {
        AtomicLong grpc = new AtomicLong();
        StageLink[] s = stages(0, grpc, Duration.ofSeconds(5));
        try {
            assertFalse(s[1].sharedMemory());
            Activations a = rows(1, 1, 64);
            s[0].send(1, 0, a);
            assertArrayEquals(a.data(), s[1].take(1, 0, System.nanoTime(), () -> false).data());
            assertEquals(1, grpc.get());
        } finally {
            close(s);
        }
        StageLink[] t = stages(1 << 16, new AtomicLong(), Duration.ofSeconds(5));
        long group = nextGroup - 1;
        assertTrue(Files.exists(StageRing.pathOf(group, 1)));
        close(t);
        assertFalse(Files.exists(StageRing.pathOf(group, 1)));
    }
}
