package ml.juno.engine.kernel.cpu;

import java.lang.management.ManagementFactory;
import java.util.Random;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;

/**
 * Allocation report for the quantized matmul kernels (a tool, not a test): once C2 has compiled them they should
 * allocate nothing, and a kernel whose vectors C2 boxes (a helper it does not inline, a Vector API operation it does
 * not intrinsify, a method past its inlining budget) allocates on every call and runs 2–50× slower while giving the
 * same numbers. For each {@code TYPE:BATCH} argument, in order and in one JVM (what was compiled before matters), it
 * runs rounds of 20 products of a random 64×2048 matrix until a round allocates at most 8 KB in all threads or
 * {@code -Djuno.alloc.seconds} (default 20) pass, and prints the least a round allocated. Run after
 * {@code test-compile}:
 *
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -XX:LoopUnrollLimit=300 \
 *   -cp gpu-ffi/target/test-classes:gpu-ffi/target/classes:$(deps) ml.juno.engine.kernel.cpu.KernelAllocationReport \
 *   Q4_0:1 Q4_0:7 Q8_0:1 Q8_0:7 Q4_K:1 Q4_K:7 Q5_K:1 Q5_K:7 Q6_K:1 Q6_K:7
 * </pre>
 *
 * Not part of the suite: whether C2 boxes can depend on what it compiled before (see docs/performance.md), so a test
 * of it would fail or pass by compilation order.
 */
public final class KernelAllocationReport {
    private KernelAllocationReport() {}

    public static void main(String[] args) {
        long limitNs = Long.getLong("juno.alloc.seconds", 20) * 1_000_000_000L;
        var mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (CpuBackend cpu = new CpuBackend(2)) {
            for (String arg : args) {
                String[] p = arg.split(":");
                GgmlType t = GgmlType.valueOf(p[0]);
                int batch = Integer.parseInt(p[1]);
                int rows = 64;
                int cols = 2048;
                WeightMatrix w = WeightMatrix.dense("w", t, RandomBlocks.of(t, rows, cols, 7), rows, cols);
                float[] x = new float[batch * cols];
                Random r = new Random(8);
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) r.nextGaussian();
                }
                float[] out = new float[batch * rows];
                long least = Long.MAX_VALUE;
                long t0 = System.nanoTime();
                while (System.nanoTime() - t0 < limitNs && least > 8_192) {
                    long a0 = mx.getTotalThreadAllocatedBytes();
                    for (int i = 0; i < 20; i++) {
                        cpu.matmul(w, x, out, batch);
                    }
                    least = Math.min(least, mx.getTotalThreadAllocatedBytes() - a0);
                }
                System.out.printf("%s batch %d: the least a round of 20 products allocated is %d bytes (after %.1f s)%n",
                        t, batch, least, (System.nanoTime() - t0) / 1e9);
            }
        }
    }
}
