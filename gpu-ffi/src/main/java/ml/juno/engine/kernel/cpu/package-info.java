/**
 * CPU kernels: Vector API implementations ({@link ml.juno.engine.kernel.cpu.CpuBackend}), their scalar references
 * ({@link ml.juno.engine.kernel.cpu.ScalarKernels}, {@link ml.juno.engine.kernel.cpu.ScalarDecode}) and the fixed pool
 * of compute threads ({@link ml.juno.engine.kernel.cpu.ComputePool}). Depends on {@code kernel}, {@code kv},
 * {@code tensor} and {@code jdk.incubator.vector}.
 */
package ml.juno.engine.kernel.cpu;
