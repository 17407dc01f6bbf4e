package ml.juno.engine.model;

import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kv.KvCache;
import ml.juno.engine.model.block.ForwardState;
import ml.juno.engine.model.block.LayerLora;

/**
 * A loaded architecture (or a shard of one): runs the layers it holds over a batch of rows. Built by an
 * {@link Architecture}; driven by {@link InferenceSession}.
 */
public interface DecoderModel {

    ModelConfig config();

    ShardSpec shard();

    /** Per-row buffer widths this model needs. */
    ForwardState.BufferSizes bufferSizes();

    /** Mixture-of-experts buffer sizes ({@link ForwardState.Routing#NONE} for dense models). */
    default ForwardState.Routing routing() {
        return ForwardState.Routing.NONE;
    }

    /** The mixture-of-experts FFNs of this shard's layers, in layer order (empty for dense models). */
    default java.util.List<ml.juno.engine.model.block.MoeFfn> moeLayers() {
        return java.util.List.of();
    }

    /** Model layer index of each of {@link #moeLayers()}. */
    default int[] moeLayerIndices() {
        return new int[0];
    }

    /** KV values per position per layer held here (KV heads of this shard × head dim). */
    int kvDim();

    /** Weight bytes one decode step reads. */
    long weightBytes();

    /**
     * The matrices every forward step multiplies by (each layer's attention and dense FFN, a mixture's router, the
     * head's output), for {@link Backend#prepare}; not the token embeddings (one row a token) nor routed experts.
     */
    default java.util.List<ml.juno.engine.kernel.WeightMatrix> streamedMatrices() {
        return java.util.List.of();
    }

    /**
     * Runs the first {@code batch} rows of {@code s}: embeds {@code s.tokens} (first shard) or takes {@code s.x}
     * as input, runs this shard's layers, and leaves the hidden states in {@code s.x}.
     */
    void forwardLayers(Backend backend, ForwardState s, int batch, KvCache cache);

    /**
     * Final norm and output projection for {@code count} rows whose hidden states are packed in {@code hidden}
     * ({@code [count][embedding]}, overwritten), logits into {@code logits} ({@code [count][vocab]}). Last shard only; a
     * tensor-parallel rank computes its vocabulary rows and gathers the rest from its peers, so every rank ends with
     * every logit.
     */
    void head(Backend backend, float[] hidden, int count, float[] logits);

    /**
     * The final norm alone, in place, for {@code count} rows packed in {@code hidden} ({@code [count][embedding]}): the
     * hidden states embeddings are pooled from, exactly what {@link #head} projects. Last shard only.
     */
    void outputNorm(Backend backend, float[] hidden, int count);

    /**
     * Sets the LoRA deltas of this shard's layers ({@code perLayer[i]} for its {@code i}-th layer, {@code null} = none;
     * an empty array removes them all), after checking every shape. Call it between steps, on the inference thread.
     */
    default void setLora(LayerLora[] perLayer) {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not take LoRA adapters");
    }
}
