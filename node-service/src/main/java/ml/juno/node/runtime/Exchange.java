package ml.juno.node.runtime;

/**
 * How a tensor-parallel node sums its partial results with the other ranks during one step: send this rank's
 * {@code [rows][width]} partial, block until the sum of all ranks comes back, write it over {@code x}.
 * One exchange per step stream; called from the inference thread only.
 */
public interface Exchange {

    /** A node without peers (pipeline stages) never reduces. */
    Exchange NONE = (stepId, index, x, rows, width) -> {
        throw new IllegalStateException("this shard has no tensor-parallel peers to reduce with");
    };

    void allReduce(long stepId, int index, float[] x, int rows, int width);
}
