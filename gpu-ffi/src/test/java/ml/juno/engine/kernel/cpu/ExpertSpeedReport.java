package ml.juno.engine.kernel.cpu;

import java.nio.file.Path;
import java.util.Random;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.ExpertBatch;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.block.GatedFfn;
import org.junit.jupiter.api.Test;

/**
 * One MoE layer step's experts on a real model, three ways, alternating in one JVM (diagnostic; runs only with
 * {@code -Djuno.espeed=MODEL.gguf}; {@code -Djuno.espeed.threads}, {@code -Djuno.espeed.rows} = batch rows, each using
 * the model's top-k of random experts): {@link CpuBackend#experts} (whole experts per worker, weights as stored), the
 * same products one expert after another each split over the threads (weights as stored), and one expert after
 * another through {@link CpuBackend#matmul} (packed copies where the type has them: Q4_K in the AVX-512 variant), as before
 * {@code experts} existed. Prints the best and median time per layer step.
 */
class ExpertSpeedReport {
    @Test
    void report() throws Exception {
        String model = System.getProperty("juno.espeed");
        if (model == null) {
            return;
        }
        int threads = Integer.getInteger("juno.espeed.threads", 2);
        NativeKernels.Loaded l = NativeKernels.load();
        try (GgufFile f = GgufFile.open(Path.of(model));
             Model m = Model.load(f, new EngineOptions(1, 64, KvType.F16, 64, 1), t -> new CpuBackend(1, null));
             CpuBackend nat = new CpuBackend(threads, l.kernels())) {
            var moe = m.decoder().moeLayers().get(0);
            GatedFfn[] ex = moe.experts();
            int used = moe.used();
            int dim = ex[0].gate().cols();
            int width = ex[0].width();
            for (String rs : System.getProperty("juno.espeed.rows", "1,16").split(",")) {
                int batch = Integer.parseInt(rs);
                Random rnd = new Random(batch);
                float[] x = new float[batch * dim];
                for (int i = 0; i < x.length; i++) {
                    x[i] = (float) rnd.nextGaussian();
                }
                // each row picks `used` distinct experts; group the choices by expert
                int[][] pick = new int[batch][used];
                int[] per = new int[ex.length];
                for (int b = 0; b < batch; b++) {
                    for (int k = 0; k < used; k++) {
                        int e;
                        do {
                            e = rnd.nextInt(ex.length);
                        } while (contains(pick[b], k, e));
                        pick[b][k] = e;
                        per[e]++;
                    }
                }
                int[] start = new int[ex.length + 1];
                for (int e = 0; e < ex.length; e++) {
                    start[e + 1] = start[e] + per[e];
                }
                int[] choices = new int[batch * used];
                int[] fill = start.clone();
                for (int b = 0; b < batch; b++) {
                    for (int k = 0; k < used; k++) {
                        choices[fill[pick[b][k]]++] = b * used + k;
                    }
                }
                float[] weights = new float[batch * used];
                java.util.Arrays.fill(weights, 1f / used);
                float[][] mixed = new float[3][batch * used * dim];
                ExpertBatch[] eb = new ExpertBatch[3];
                for (int v = 0; v < 3; v++) {
                    eb[v] = new ExpertBatch(ex.length, dim, used, new ExpertBatch.Buffers(x, choices, weights, mixed[v],
                            new float[batch * dim], new float[batch * dim], new float[batch * width], new float[batch * width]));
                }
                int experts = 0;
                for (int v = 0; v < 3; v++) {
                    eb[v].clear(false);
                    for (int e = 0; e < ex.length; e++) {
                        if (per[e] > 0) {
                            eb[v].add(e, ex[e].gate(), ex[e].up(), ex[e].down(), start[e], per[e]);
                        }
                    }
                    experts = eb[v].count();
                }
                String[] names = {"experts() together", "one by one, as stored", "one by one, packed (before)"};
                int rounds = 7;
                int reps = Math.max(3, 200 / batch);
                double[][] ms = new double[3][rounds * reps];
                for (int round = 0; round < rounds + 1; round++) {
                    for (int v = 0; v < 3; v++) {
                        for (int i = 0; i < reps; i++) {
                            long t0 = System.nanoTime();
                            switch (v) {
                                case 0 -> nat.experts(eb[0]);
                                case 1 -> oneByOne(nat, eb[1], false);
                                default -> oneByOne(nat, eb[2], true);
                            }
                            if (round > 0) { // round 0 warms up (and packs)
                                ms[v][(round - 1) * reps + i] = (System.nanoTime() - t0) / 1e6;
                            }
                        }
                    }
                }
                long macs = 0;
                for (int k = 0; k < experts; k++) {
                    macs += 3L * width * dim * eb[0].rows(k);
                }
                System.out.printf("%s, layer 0: %d rows, %d experts (%d used per row), %d threads, %s%n", Path.of(model).getFileName(),
                        batch, experts, used, threads, l.kernels().isa());
                for (int v = 0; v < 3; v++) {
                    double[] t = ms[v].clone();
                    java.util.Arrays.sort(t);
                    System.out.printf("  %-28s best %.3f ms, median %.3f ms (%.1f GMAC/s at best)%n", names[v], t[0],
                            t[t.length / 2], macs / t[0] / 1e6);
                }
                for (int i = 0; i < mixed[0].length; i++) {
                    if (Float.floatToIntBits(mixed[0][i]) != Float.floatToIntBits(mixed[1][i])) {
                        throw new AssertionError("together and one by one differ at " + i);
                    }
                }
            }
        }
    }

    private static boolean contains(int[] a, int n, int e) {
        for (int i = 0; i < n; i++) {
            if (a[i] == e) {
                return true;
            }
        }
        return false;
    }

    /** The experts one after another, each product over the team; {@code packed}: through matmul (packed copies). */
    private static void oneByOne(CpuBackend nat, ExpertBatch b, boolean packed) {
        for (int k = 0; k < b.count(); k++) {
            int rows = b.rows(k);
            WeightMatrix gate = b.gate(k);
            b.gather(k, b.in);
            if (packed) {
                nat.matmul(gate, b.gate, b.up(k), b.up, null, null, b.in, rows);
            } else {
                nat.unpackedPair(gate, b.gate, b.up(k), b.up, b.in, rows);
            }
            nat.swiglu(b.gate, b.up, rows, gate.rows());
            if (packed) {
                nat.matmul(b.down(k), b.gate, b.out, rows);
            } else {
                nat.unpackedPair(b.down(k), b.out, null, null, b.gate, rows);
            }
            b.scatter(k, b.out);
        }
    }
}
