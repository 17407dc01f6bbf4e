package ml.juno.engine.kernel.cpu;

import org.junit.jupiter.api.Test;

/**
 * What one parallel step of {@link ComputePool} costs with nothing to compute (diagnostic; runs only with
 * -Djuno.barrier): back to back, and after a serial gap such as a token's norms and quantization between products.
 */
class BarrierCostReport {
    @Test
    void report() {
        if (System.getProperty("juno.barrier") == null) {
            return;
        }
        int threads = Integer.getInteger("juno.barrier.threads", 2);
        try (ComputePool pool = new ComputePool(threads)) {
            long[] sink = new long[threads * 16];
            ComputePool.Body body = (chunk, worker) -> sink[worker * 16]++;
            for (long gapNs : new long[] {0, 20_000, 200_000}) {
                int n = gapNs == 0 ? 200_000 : 20_000;
                for (int warm = 0; warm < 2; warm++) {
                    long inSteps = 0;
                    for (int i = 0; i < n; i++) {
                        long g0 = System.nanoTime();
                        while (System.nanoTime() - g0 < gapNs) {
                            Thread.onSpinWait();
                        }
                        long t0 = System.nanoTime();
                        pool.parallelFor(threads, body);
                        inSteps += System.nanoTime() - t0;
                    }
                    if (warm == 1) {
                        System.out.printf("parallel step after a %d us gap: %.2f us (%d threads)%n", gapNs / 1000,
                                inSteps / 1e3 / n, threads);
                    }
                }
            }
        }
    }
}
