/**
 * GGUF files: the memory-mapped reader ({@link ml.juno.engine.gguf.GgufFile}), the writer, metadata key and tensor
 * name constants, and model hyper-parameters read from metadata. Depends on {@code ml.juno.engine.tensor} only.
 */
package ml.juno.engine.gguf;
