package ml.juno.node.runtime;

import ml.juno.engine.model.block.AllReduce;

/**
 * The engine's {@link AllReduce} hook for a tensor-parallel shard: numbers the reductions of the step in call order
 * (every rank calls them in the same order: attention output, then FFN output, per layer) and hands each to the
 * {@link Exchange} of the step stream that runs the step. Set per step by the inference thread.
 */
final class StepAllReduce implements AllReduce {
    private Exchange exchange = Exchange.NONE;
    private long stepId;
    private int index;
    private long waitNanos;

    void begin(long stepId, Exchange exchange) {
        this.stepId = stepId;
        this.exchange = exchange;
        this.index = 0;
        this.waitNanos = 0;
    }

    void end() {
        this.exchange = Exchange.NONE;
    }

    /** Reductions done in the current (or last) step. */
    int count() {
        return index;
    }

    /** Time the current step spent in all-reduces (sending, waiting for the sum, decoding it). */
    long waitNanos() {
        return waitNanos;
    }

    @Override
    public void sum(float[] x, int rows, int width) {
        long t0 = System.nanoTime();
        exchange.allReduce(stepId, index++, x, rows, width);
        waitNanos += System.nanoTime() - t0;
    }
}
