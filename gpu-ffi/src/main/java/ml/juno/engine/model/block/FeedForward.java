package ml.juno.engine.model.block;

import ml.juno.engine.kernel.Backend;

/** The feed-forward half of a decoder layer: reads {@code s.xb}, writes {@code s.proj} (a partial sum in a tensor-parallel shard). */
public interface FeedForward {

    void forward(Backend backend, ForwardState s, int batch);

    /** The matrices every step multiplies by, to {@code to} (not a mixture's experts: only the tokens' experts are read). */
    void streamedMatrices(java.util.function.Consumer<ml.juno.engine.kernel.WeightMatrix> to);

    /**
     * {@link #forward(Backend, ForwardState, int)} with LoRA deltas on gate/up/down ({@code null}: none). Only a dense
     * FFN takes them; {@link #checkLora} refuses them elsewhere before any compute.
     */
    default void forward(Backend backend, ForwardState s, int batch, LayerLora lora) {
        forward(backend, s, batch);
    }

    /** Refuses LoRA terms on gate/up/down that this FFN cannot apply (the default: any). */
    default void checkLora(LayerLora lora, String where) {
        for (Projection p : new Projection[] {Projection.GATE, Projection.UP, Projection.DOWN}) {
            if (lora.has(p)) {
                throw new IllegalArgumentException(where + ": LoRA on " + p.shortName + " needs a dense FFN; this layer's FFN is "
                        + getClass().getSimpleName() + " (mixture of experts: adapt the attention targets q, k, v, o only)");
            }
        }
    }

    /** Weight bytes one decode step reads (for MoE: the experts one token uses). */
    long weightBytes();
}
