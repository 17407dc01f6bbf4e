package ml.juno.engine.kernel.cpu;

import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;

/**
 * Native against Java kernels on TinyLlama's ffn_gate shape (5632 x 2048), alternating, one JVM (diagnostic; runs only
 * with -Djuno.nspeed=TYPE,...; -Djuno.nspeed.threads, -Djuno.nspeed.batches).
 */
class NativeSpeedReport {
    @Test
    void report() {
        String types = System.getProperty("juno.nspeed");
        if (types == null) {
            return;
        }
        int threads = Integer.getInteger("juno.nspeed.threads", 1);
        int rows = 5632;
        int cols = 2048;
        NativeKernels.Loaded l = NativeKernels.load();
        try (CpuBackend java = new CpuBackend(threads, null); CpuBackend nat = new CpuBackend(threads, l.kernels())) {
            for (String name : types.split(",")) {
                GgmlType t = GgmlType.valueOf(name);
                WeightMatrix w = WeightMatrix.dense("w", t, RandomBlocks.of(t, rows, cols, 1), rows, cols);
                for (String bs : System.getProperty("juno.nspeed.batches", "1,4,16,128").split(",")) {
                    int batch = Integer.parseInt(bs);
                    float[] x = new float[batch * cols];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) Math.sin(i);
                    }
                    float[] out = new float[batch * rows];
                    double[] best = {Double.MAX_VALUE, Double.MAX_VALUE};
                    CpuBackend[] both = {java, nat};
                    for (int round = 0; round < 6; round++) {
                        for (int k = 0; k < 2; k++) {
                            int n = Math.max(2, 200 / batch);
                            long t0 = System.nanoTime();
                            for (int i = 0; i < n; i++) {
                                both[k].matmul(w, x, out, batch);
                            }
                            best[k] = Math.min(best[k], (System.nanoTime() - t0) / 1e6 / n);
                        }
                    }
                    System.out.printf("%-5s batch %3d: java %.3f ms, native %s %.3f ms (%.2fx), native %.1f GMAC/s, %.1f GB/s%n", t,
                            batch, best[0], l.kernels().isa(), best[1], best[0] / best[1],
                            (double) rows * cols * batch / best[1] / 1e6, w.byteSize() / best[1] / 1e6);
                }
            }
        }
    }
}
