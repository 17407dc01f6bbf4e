package ml.juno.node.runtime;

import java.util.function.BooleanSupplier;
import ml.juno.engine.model.block.AllReduce;

/**
 * The engine's {@link AllReduce} hook for a shard: numbers the reductions of the step in call order (every rank calls
 * them in the same order: attention output, then FFN output, per layer, then the output head's gather) and hands each to the shard's
 * {@link RankReduce}, which sums it with the peers; counts the step's reductions, their time and the bytes sent. A
 * pipeline shard has no {@link RankReduce} and never reduces. Set per step by the inference thread.
 */
final class StepAllReduce implements AllReduce {
    private RankReduce ranks;
    private BooleanSupplier cancelled = () -> false;
    private long stepId;
    private long stepStart;
    private int index;
    private long waitNanos;
    private long bytesSent;

    void connect(RankReduce ranks) {
        this.ranks = ranks;
    }

    void begin(long stepId, BooleanSupplier cancelled) {
        this.stepId = stepId;
        this.cancelled = cancelled;
        this.stepStart = System.nanoTime();
        this.index = 0;
        this.waitNanos = 0;
        this.bytesSent = 0;
    }

    /** Reductions done in the current (or last) step. */
    int count() {
        return index;
    }

    /** Time the current step spent in all-reduces (encoding, sending, waiting for the peers, summing). */
    long waitNanos() {
        return waitNanos;
    }

    /** Bytes of partials the current step sent to the peers. */
    long bytesSent() {
        return bytesSent;
    }

    @Override
    public void sum(float[] x, int rows, int width) {
        if (ranks == null) {
            throw new IllegalStateException("this shard has no tensor-parallel peers to reduce with");
        }
        long t0 = System.nanoTime();
        bytesSent += ranks.allReduce(stepId, index++, x, rows, width, stepStart, cancelled);
        waitNanos += System.nanoTime() - t0;
    }

    @Override
    public void gatherColumns(float[] x, int rows, int total, int from, int width) {
        if (ranks == null) {
            AllReduce.super.gatherColumns(x, rows, total, from, width);
            return;
        }
        long t0 = System.nanoTime();
        bytesSent += ranks.gather(stepId, index++, x, rows, total, from, width, stepStart, cancelled);
        waitNanos += System.nanoTime() - t0;
    }
}
