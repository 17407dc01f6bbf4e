package ml.juno.engine.model.block;

import ml.juno.engine.kernel.Backend;

/** The feed-forward half of a decoder layer: reads {@code s.xb}, writes {@code s.proj} (a partial sum in a tensor-parallel shard). */
public interface FeedForward {

    void forward(Backend backend, ForwardState s, int batch);

    /** Weight bytes one decode step reads (for MoE: the experts one token uses). */
    long weightBytes();
}
