package ml.juno.engine.kernel.cpu;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;

/** CPU-time speed of one 2048×2048 matmul per type (diagnostic; runs only with -Djuno.speed). */
class MatmulSpeedReport {
    @Test
    void report() {
        if (System.getProperty("juno.speed") == null) {
            return;
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        int rows = 2048;
        int cols = 2048;
        try (CpuBackend cpu = new CpuBackend(1)) {
            for (String name : System.getProperty("juno.speed").split(",")) {
                GgmlType t = GgmlType.valueOf(name);
                WeightMatrix w = WeightMatrix.dense("w", t, RandomBlocks.of(t, rows, cols, 1), rows, cols);
                for (int batch : new int[] {1, 16}) {
                    float[] x = new float[batch * cols];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) Math.sin(i);
                    }
                    float[] out = new float[batch * rows];
                    for (int i = 0; i < Integer.getInteger("juno.warm", 20); i++) {
                        cpu.matmul(w, x, out, batch);
                    }
                    int n = 20;
                    long c0 = mx.getCurrentThreadCpuTime();
                    for (int i = 0; i < n; i++) {
                        cpu.matmul(w, x, out, batch);
                    }
                    double sec = (mx.getCurrentThreadCpuTime() - c0) / 1e9 / n;
                    System.out.printf("%-5s batch %2d: %.3f ms cpu, %.2f GFLOP/s, %.2f GB/s weights%n", t, batch, sec * 1e3,
                            2.0 * rows * cols * batch / sec / 1e9, w.byteSize() / sec / 1e9);
                }
            }
        }
    }
}
