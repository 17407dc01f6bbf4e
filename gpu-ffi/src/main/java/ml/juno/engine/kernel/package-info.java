/**
 * The kernel interface the forward pass calls ({@link ml.juno.engine.kernel.Backend}) and the weight view it
 * multiplies with ({@link ml.juno.engine.kernel.WeightMatrix}). Depends on {@code tensor} and {@code kv} only;
 * CPU kernels live in {@code kernel.cpu}, GPU backends will sit beside it.
 */
package ml.juno.engine.kernel;
