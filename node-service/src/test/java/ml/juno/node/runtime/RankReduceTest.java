package ml.juno.node.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.Activations;
import org.junit.jupiter.api.Test;

/**
 * Ranks on threads of one process, their partials delivered straight into each other's {@link RankReduce} (the node's
 * gRPC links do the same over the network): every rank ends with the same bits, the rank-order sum; lossy wire dtypes
 * agree across ranks too; a peer whose link ends, a silent peer, a cancelled step fail in bounded time with the reason;
 * a partial left over from a failed step is skipped; partials of another group are refused.
 */
class RankReduceTest {
    static final long GROUP = 42;
    /** One thread per waiting rank (the common pool may have a single thread on a small machine). */
    static final java.util.concurrent.ExecutorService THREADS = java.util.concurrent.Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "rank");
        t.setDaemon(true);
        return t;
    });

    /** {@code n} ranks whose outbound links hand the partial to the other ranks' {@link RankReduce#receive}. */
    static List<RankReduce> ranks(int n, ActivationDtype dtype, Duration timeout) {
        return ranks(n, dtype, timeout, GROUP, 0, new java.util.concurrent.atomic.AtomicLong());
    }

    /**
     * {@code n} ranks of {@code group}; with {@code shmPayload > 0} they also have shared-memory inboxes. {@code byGrpc}
     * counts the partials (not hellos) that went through the stand-in for the gRPC links.
     */
    static List<RankReduce> ranks(int n, ActivationDtype dtype, Duration timeout, long group, long shmPayload,
                                  java.util.concurrent.atomic.AtomicLong byGrpc) {
        List<String> peers = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            peers.add("127.0.0.1:" + (9000 + r));
        }
        List<RankReduce> ranks = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            ranks.add(new RankReduce(new ShardLoad.Tensor(r, n, peers, group, 0), ActivationCodec.of(dtype, ByteOrder.LITTLE_ENDIAN), timeout,
                    shmPayload));
        }
        for (RankReduce me : ranks) {
            connect(me, ranks, group, byGrpc);
        }
        return ranks;
    }

    /** Connects {@code me} to the stand-in links: a partial goes to whichever ranks {@code ranks} holds when it is sent. */
    static void connect(RankReduce me, List<RankReduce> ranks, long group, java.util.concurrent.atomic.AtomicLong byGrpc) {
        {
            me.connect((shard, reduce) -> new RankReduce.Outbound() {
                @Override
                public long send(long stepId, int index, Activations partial, boolean[] to) {
                    for (RankReduce other : ranks) {
                        if (other != me && (to == null || to[other.shard().rank()])) {
                            if (stepId >= 0) {
                                byGrpc.incrementAndGet();
                            }
                            other.receive(new RankReduce.Partial(group, shard.rank(), stepId, index, partial));
                        }
                    }
                    return (long) partial.data().length * (ranks.size() - 1);
                }

                @Override
                public void close() {
                }
            });
        }
    }

    static float[] random(long seed, int size) {
        Random rnd = new Random(seed);
        float[] x = new float[size];
        for (int i = 0; i < size; i++) {
            x[i] = (float) rnd.nextGaussian() * (1 + rnd.nextInt(100));
        }
        return x;
    }

    /** Runs one all-reduce on every rank at once (each on its own thread), returning each rank's result. */
    static List<float[]> reduce(List<RankReduce> ranks, long stepId, int index, List<float[]> partials, int rows, int width) {
        List<CompletableFuture<float[]>> running = new ArrayList<>();
        for (int r = 0; r < ranks.size(); r++) {
            RankReduce me = ranks.get(r);
            float[] x = partials.get(r).clone();
            running.add(CompletableFuture.supplyAsync(() -> {
                me.allReduce(stepId, index, x, rows, width, System.nanoTime(), () -> false);
                return x;
            }, THREADS));
        }
        return running.stream().map(f -> f.orTimeout(10, TimeUnit.SECONDS).join()).toList();
    }

    @Test
    void everyRank_getsTheRankOrderSum_bitForBit() {
        for (int n : new int[] {2, 3, 4}) {
            int rows = 3;
            int width = 64;
            List<RankReduce> ranks = ranks(n, ActivationDtype.FLOAT32, Duration.ofSeconds(5));
            for (int step = 1; step <= 3; step++) {
                List<float[]> partials = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    partials.add(random(step * 10L + r, rows * width));
                }
                float[] want = partials.get(0).clone();
                for (int r = 1; r < n; r++) {
                    for (int k = 0; k < want.length; k++) {
                        want[k] += partials.get(r)[k];
                    }
                }
                for (int index = 0; index < 2; index++) {
                    List<float[]> got = reduce(ranks, step, index, partials, rows, width);
                    for (int r = 0; r < n; r++) {
                        assertArrayEquals(want, got.get(r), n + " ranks, rank " + r + ", step " + step);
                    }
                }
            }
        }
    }

    /**
     * The output head's vocabulary slices: every rank ends with every column, exactly as each rank computed its own (a
     * FLOAT16 wire leaves logits unrounded), through the stand-in for gRPC and through shared memory (where /dev/shm is
     * there); slices of unequal widths; a rank whose slice does not start where the lower ranks' end is refused.
     */
    @Test
    void gatheredColumns_areEveryRanksExactSlice_inRankOrder() {
        int rows = 3;
        int total = 100;
        int[][] slices = {{0, 40}, {40, 35}, {75, 25}};
        float[] whole = random(7, rows * total);
        long group = System.nanoTime() & 0xffff_fffL;
        for (long shm : new long[] {0, 1 << 16}) {
            List<RankReduce> ranks = ranks(3, ActivationDtype.FLOAT16, Duration.ofSeconds(5), group++, shm, new java.util.concurrent.atomic.AtomicLong());
            List<CompletableFuture<float[]>> running = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                RankReduce me = ranks.get(r);
                int from = slices[r][0];
                int width = slices[r][1];
                float[] x = new float[rows * total];
                java.util.Arrays.fill(x, Float.NaN); // whatever the buffer held: every column must be written
                for (int i = 0; i < rows; i++) {
                    System.arraycopy(whole, i * total + from, x, i * width, width);
                }
                running.add(CompletableFuture.supplyAsync(() -> {
                    me.gather(5, 44, x, rows, total, from, width, System.nanoTime(), () -> false);
                    return x;
                }, THREADS));
            }
            for (int r = 0; r < 3; r++) {
                assertArrayEquals(whole, running.get(r).orTimeout(10, TimeUnit.SECONDS).join(), "shm payload " + shm + ", rank " + r);
            }
            ranks.forEach(RankReduce::close);
        }

        List<RankReduce> two = ranks(2, ActivationDtype.FLOAT32, Duration.ofSeconds(5));
        CompletableFuture<Void> other = CompletableFuture.runAsync(() -> two.get(0).gather(6, 0, new float[rows * total], rows, total, 0, 50,
                System.nanoTime(), () -> false), THREADS);
        var wrong = assertThrows(IllegalStateException.class, () -> two.get(1).gather(6, 0, new float[rows * total], rows, total, 60, 40,
                System.nanoTime(), () -> false));
        assertEquals("gather 0 of step 6: this rank's columns start at 60, but the lower ranks' end at 50", wrong.getMessage());
        var short_ = assertThrows(java.util.concurrent.CompletionException.class, () -> other.orTimeout(10, TimeUnit.SECONDS).join());
        assertEquals("gather 0 of step 6: the ranks' columns cover 90 of 100", short_.getCause().getMessage());
    }

    @Test
    void lossyWireDtypes_giveTheSameSumOnEveryRank() {
        for (ActivationDtype d : new ActivationDtype[] {ActivationDtype.FLOAT16, ActivationDtype.INT8}) {
            List<RankReduce> ranks = ranks(3, d, Duration.ofSeconds(5));
            List<float[]> partials = List.of(random(1, 128), random(2, 128), random(3, 128));
            List<float[]> got = reduce(ranks, 1, 0, partials, 2, 64);
            assertArrayEquals(got.get(0), got.get(1), d + ": rank 1 differs from rank 0");
            assertArrayEquals(got.get(0), got.get(2), d + ": rank 2 differs from rank 0");
            float exact = partials.get(0)[5] + partials.get(1)[5] + partials.get(2)[5];
            assertNotEquals(0f, got.get(0)[5]);
            assertTrue(Math.abs(got.get(0)[5] - exact) < 0.05f * (Math.abs(exact) + 10), d + ": " + got.get(0)[5] + " vs " + exact);
        }
    }

    @Test
    void aPartialLeftFromAFailedStep_isSkipped_andOneFromAnotherGroupIsRefused() {
        List<RankReduce> ranks = ranks(2, ActivationDtype.FLOAT32, Duration.ofSeconds(5));
        // rank 1 got as far as all-reduce 3 of step 7 before that step failed on rank 0
        ranks.get(0).receive(new RankReduce.Partial(GROUP, 1, 7, 3, Activations.encode(ActivationCodec.of(ActivationDtype.FLOAT32,
                ByteOrder.LITTLE_ENDIAN), new float[] {100, 100}, 0, 1, 2)));
        List<float[]> got = reduce(ranks, 8, 0, List.of(new float[] {1, 2}, new float[] {3, 4}), 1, 2);
        assertArrayEquals(new float[] {4, 6}, got.get(0));
        assertArrayEquals(new float[] {4, 6}, got.get(1));

        var other = assertThrows(IllegalArgumentException.class, () -> ranks.get(0).receive(new RankReduce.Partial(43, 1, 9, 0,
                Activations.encode(ActivationCodec.of(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN), new float[2], 0, 1, 2))));
        assertEquals("partial of group 43, but this node serves rank 0 of group 42", other.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new RankReduce(new ShardLoad.Tensor(0, 2, List.of("a:1"), GROUP, 0),
                ActivationCodec.of(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN), Duration.ofSeconds(1)));
    }

    @Test
    void aPeerWhoseLinkEnds_aSilentPeer_andACancelledStep_failTheAllReduceInBoundedTime() throws Exception {
        List<RankReduce> ranks = ranks(2, ActivationDtype.FLOAT32, Duration.ofMillis(300));
        RankReduce rank0 = ranks.getFirst();

        long t0 = System.nanoTime();
        var silent = assertThrows(IllegalStateException.class,
                () -> rank0.allReduce(1, 0, new float[2], 1, 2, System.nanoTime(), () -> false));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals("all-reduce 0 of step 1: no partial from rank 1 (127.0.0.1:9001) within PT0.3S", silent.getMessage());
        assertTrue(ms >= 300 && ms < 2000, ms + " ms");

        // a link that ended before the step began is not this step's failure (the peer may be back); one during it is
        rank0.ended(1, "rank 1 (127.0.0.1:9001) closed its link");
        long stepStart = System.nanoTime();
        CompletableFuture<Void> later = CompletableFuture.runAsync(() -> {
            sleep(100);
            rank0.ended(1, "the link to rank 1 (127.0.0.1:9001) broke: UNAVAILABLE");
        }, THREADS);
        t0 = System.nanoTime();
        var gone = assertThrows(IllegalStateException.class, () -> rank0.allReduce(2, 0, new float[2], 1, 2, stepStart, () -> false));
        ms = (System.nanoTime() - t0) / 1_000_000;
        later.join();
        assertEquals("all-reduce 0 of step 2: the link to rank 1 (127.0.0.1:9001) broke: UNAVAILABLE", gone.getMessage());
        assertTrue(ms >= 90 && ms < 290, "failed " + ms + " ms into the wait, not at the timeout");

        AtomicBoolean cancelled = new AtomicBoolean();
        CompletableFuture.runAsync(() -> {
            sleep(100);
            cancelled.set(true);
        }, THREADS);
        t0 = System.nanoTime();
        var cancel = assertThrows(IllegalStateException.class, () -> rank0.allReduce(3, 0, new float[2], 1, 2, System.nanoTime(), cancelled::get));
        ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals("all-reduce 0 of step 3: the coordinator cancelled the step", cancel.getMessage());
        assertTrue(ms < 290, ms + " ms");
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
