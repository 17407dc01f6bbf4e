/**
 * CPU kernels: the backend ({@link ml.juno.engine.kernel.cpu.CpuBackend}, Vector API, or Juno's C kernels through
 * {@link ml.juno.engine.kernel.cpu.NativeKernels}), one kernel class per block type ({@code *Kernel}, each with a scalar
 * reference) chosen through one table of per-type facts ({@link ml.juno.engine.kernel.cpu.CpuTypeTraits}), and the
 * fixed pool of compute threads ({@link ml.juno.engine.kernel.cpu.ComputePool}). The scalar references of the other
 * operations ({@code ScalarKernels}, {@code ScalarBackend}) live with the tests. Depends on {@code kernel}, {@code kv},
 * {@code tensor} and {@code jdk.incubator.vector}.
 */
package ml.juno.engine.kernel.cpu;
