package ml.juno.engine.model.block;

import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;

/**
 * An in-process {@link AllReduce} for {@code parts} tensor-parallel ranks running on their own threads: each rank
 * publishes its partial sums, waits for the others, and adds all of them in rank order, so every rank gets the
 * bit-identical result whatever the thread timing; the output head's vocabulary slices are gathered likewise. For
 * tests and single-machine tensor parallelism.
 */
public final class LocalAllReduce {
    private final int parts;
    private final float[][] published;
    private final CyclicBarrier barrier;

    public LocalAllReduce(int parts) {
        if (parts <= 0) {
            throw new IllegalArgumentException("parts must be positive: " + parts);
        }
        this.parts = parts;
        this.published = new float[parts][0];
        this.barrier = new CyclicBarrier(parts);
    }

    public int parts() {
        return parts;
    }

    /** The hook rank {@code rank} passes to its model. */
    public AllReduce forRank(int rank) {
        if (rank < 0 || rank >= parts) {
            throw new IllegalArgumentException("rank " + rank + " is outside 0.." + (parts - 1));
        }
        return new AllReduce() {
            @Override
            public void sum(float[] x, int rows, int width) {
                LocalAllReduce.this.sum(rank, x, rows * width);
            }

            @Override
            public void gatherColumns(float[] x, int rows, int total, int from, int width) {
                gather(rank, x, rows, total, from, width);
            }
        };
    }

    private void gather(int rank, float[] x, int rows, int total, int from, int width) {
        int n = rows * width;
        float[] mine = new float[n + 2];
        System.arraycopy(x, 0, mine, 0, n);
        mine[n] = from;
        mine[n + 1] = width;
        published[rank] = mine;
        await();
        AllReduce.spreadRows(x, rows, total, from, width);
        int expected = 0;
        for (int r = 0; r < parts; r++) {
            float[] p = published[r];
            int w = (int) p[p.length - 1];
            int f = (int) p[p.length - 2];
            if (f != expected || p.length != rows * w + 2) {
                throw new IllegalStateException("rank " + r + " gathered columns [" + f + ", " + (f + w) + "), expected them to start at " + expected);
            }
            if (r != rank) {
                for (int i = 0; i < rows; i++) {
                    System.arraycopy(p, i * w, x, i * total + f, w);
                }
            }
            expected += w;
        }
        if (expected != total) {
            throw new IllegalStateException("the ranks' columns cover " + expected + " of " + total);
        }
        await(); // nobody republishes before everyone has read
    }

    private void sum(int rank, float[] x, int n) {
        if (published[rank].length < n) {
            published[rank] = new float[n];
        }
        System.arraycopy(x, 0, published[rank], 0, n);
        await();
        System.arraycopy(published[0], 0, x, 0, n);
        for (int r = 1; r < parts; r++) {
            float[] p = published[r];
            for (int i = 0; i < n; i++) {
                x[i] += p[i];
            }
        }
        await(); // nobody republishes before everyone has read
    }

    private void await() {
        try {
            barrier.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("all-reduce interrupted", e);
        } catch (BrokenBarrierException e) {
            throw new IllegalStateException("another tensor-parallel rank failed during the all-reduce", e);
        }
    }
}
