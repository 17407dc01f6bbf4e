/**
 * The kernel interface the forward pass calls ({@link ml.juno.engine.kernel.Backend}), the weight view it multiplies
 * with ({@link ml.juno.engine.kernel.WeightMatrix}), the start-up choice of a backend
 * ({@link ml.juno.engine.kernel.Backends}) and ggml's {@code exp} ({@link ml.juno.engine.kernel.GgmlExp}). Depends on
 * {@code tensor} and {@code kv}; {@code Backends} alone also on {@code kernel.cpu}, where the CPU kernels live (GPU
 * backends will sit beside it).
 */
package ml.juno.engine.kernel;
