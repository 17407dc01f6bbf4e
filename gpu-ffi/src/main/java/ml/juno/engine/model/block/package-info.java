/**
 * Shared transformer blocks (RMSNorm, RoPE, grouped-query attention, SwiGLU FFN) and the preallocated buffers they work
 * in ({@link ml.juno.engine.model.block.ForwardState}). Architectures are assembled from these. Depends on kernel and kv.
 */
package ml.juno.engine.model.block;
