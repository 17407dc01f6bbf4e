package ml.juno.model.shard;

import java.util.ArrayList;
import java.util.List;

/**
 * What one node of a cluster serves: a layer range (pipeline parallel, {@code worldSize == 1}) or slice
 * {@code tensorRank} of {@code worldSize} of every layer (tensor parallel, {@code layers} = all of them).
 */
public record ShardAssignment(LayerRange layers, int tensorRank, int worldSize) {

    public ShardAssignment {
        if (layers == null) {
            throw new IllegalArgumentException("layer range is required");
        }
        if (worldSize < 1 || tensorRank < 0 || tensorRank >= worldSize) {
            throw new IllegalArgumentException("tensor slice " + tensorRank + " of " + worldSize + " is not valid");
        }
    }

    public boolean isTensorParallel() {
        return worldSize > 1;
    }

    /** Contiguous layer blocks balanced by weight bytes, one per node in order. */
    public static List<ShardAssignment> pipeline(long[] layerBytes, int nodes) {
        return pipeline(layerBytes, 0, nodes);
    }

    /**
     * Contiguous layer blocks balanced by weight bytes, one per node in order, the last node's output head ({@code
     * headBytes}, the matrix it multiplies every logit row by) counted with its layers.
     */
    public static List<ShardAssignment> pipeline(long[] layerBytes, long headBytes, int nodes) {
        List<ShardAssignment> out = new ArrayList<>(nodes);
        for (LayerRange r : LayerRange.balance(layerBytes, headBytes, nodes)) {
            out.add(new ShardAssignment(r, 0, 1));
        }
        return out;
    }

    /** Every layer on every node, slice {@code rank} of {@code nodes}. */
    public static List<ShardAssignment> tensor(int modelLayers, int nodes) {
        if (nodes < 1) {
            throw new IllegalArgumentException("a tensor-parallel cluster needs at least one node, got " + nodes);
        }
        List<ShardAssignment> out = new ArrayList<>(nodes);
        for (int r = 0; r < nodes; r++) {
            out.add(new ShardAssignment(new LayerRange(0, modelLayers), r, nodes));
        }
        return out;
    }
}
