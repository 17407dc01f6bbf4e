/**
 * Embeddings from a model's final hidden states: the pooling a GGUF declares ({@link ml.juno.engine.embedding.Pooling}),
 * a per-sequence accumulator that pools rows as steps compute them ({@link ml.juno.engine.embedding.EmbeddingPool}) and
 * a one-sequence-at-a-time path over a session ({@link ml.juno.engine.embedding.Embedder}). Depends on
 * {@code engine.model}, {@code engine.step} and {@code engine.gguf} only.
 */
package ml.juno.engine.embedding;
