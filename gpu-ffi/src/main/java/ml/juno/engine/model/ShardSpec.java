package ml.juno.engine.model;

/**
 * Which part of a model one engine instance holds. Pipeline: layers {@code [firstLayer, endLayer)}; the shard with
 * layer 0 embeds tokens, the shard ending at the last layer produces logits, others pass hidden states. Tensor
 * parallel: slice {@code tensorRank} of {@code tensorParts} of the attention heads and FFN width (partial sums are
 * combined by an {@link ml.juno.engine.model.block.AllReduce}).
 */
public record ShardSpec(int firstLayer, int endLayer, int tensorRank, int tensorParts) {
    public ShardSpec {
        if (firstLayer < 0 || endLayer <= firstLayer || tensorParts <= 0 || tensorRank < 0 || tensorRank >= tensorParts) {
            throw new IllegalArgumentException("bad shard: layers [" + firstLayer + ", " + endLayer + "), tensor slice "
                    + tensorRank + " of " + tensorParts);
        }
    }

    /** The whole model of {@code layers} layers. */
    public static ShardSpec whole(int layers) {
        return new ShardSpec(0, layers, 0, 1);
    }

    public int layerCount() {
        return endLayer - firstLayer;
    }

    public boolean embeds() {
        return firstLayer == 0;
    }

    public boolean isLast(int modelLayers) {
        return endLayer == modelLayers;
    }
}
