package ml.juno.engine.model;

import ml.juno.engine.kernel.AttentionShape;

/** Everything the forward pass needs to know about a model's shape, read once from GGUF metadata. */
public record ModelConfig(String architecture, ModelDims dims, AttentionShape attention, RopeConfig rope, float normEps) {
    public ModelConfig {
        if (architecture == null || dims == null || attention == null || rope == null || !(normEps > 0f)) {
            throw new IllegalArgumentException("incomplete model config for " + architecture);
        }
        if (rope.dims() > attention.headDim()) {
            throw new IllegalArgumentException("rope dims " + rope.dims() + " exceed head dim " + attention.headDim());
        }
    }
}
