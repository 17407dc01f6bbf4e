package ml.juno.engine.kernel.cpu;

import java.nio.file.Path;
import java.util.Random;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.ExpertBatch;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.block.GatedFfn;
import org.junit.jupiter.api.Test;

class ExpertColdReport {
    @Test
    void report() throws Exception {
        String model = System.getProperty("juno.ecold");
        if (model == null) return;
        int threads = Integer.getInteger("juno.ecold.threads", 2);
        NativeKernels.Loaded l = NativeKernels.load();
        try (GgufFile f = GgufFile.open(Path.of(model));
             Model m = Model.load(f, new EngineOptions(1, 64, KvType.F16, 64, 1), t -> new CpuBackend(1, null));
             CpuBackend nat = new CpuBackend(threads, l.kernels())) {
            var layers = m.decoder().moeLayers();
            GatedFfn[] ex0 = layers.get(0).experts();
            int used = layers.get(0).used();
            int dim = ex0[0].gate().cols();
            int width = ex0[0].width();
            float[] x = new float[dim];
            Random rnd = new Random(1);
            for (int i = 0; i < dim; i++) x[i] = (float) rnd.nextGaussian();
            int[] choices = new int[used];
            for (int i = 0; i < used; i++) choices[i] = i;
            float[] weights = new float[used];
            java.util.Arrays.fill(weights, 1f / used);
            int sets = layers.size() * (ex0.length / used);
            ExpertBatch[] eb = new ExpertBatch[sets];
            float[] mixed = new float[used * dim];
            int s = 0;
            for (var layer : layers) {
                GatedFfn[] ex = layer.experts();
                for (int g = 0; g < ex.length / used; g++) {
                    eb[s] = new ExpertBatch(ex.length, dim, used, new ExpertBatch.Buffers(x, choices, weights, mixed,
                            new float[dim], new float[dim], new float[width], new float[width]));
                    eb[s].clear(false);
                    for (int k = 0; k < used; k++) {
                        eb[s].add(g * used + k, ex[g * used + k].gate(), ex[g * used + k].up(), ex[g * used + k].down(), k, 1);
                    }
                    s++;
                }
            }
            long bytes = 0;
            for (int k = 0; k < used; k++) bytes += ex0[k].weightBytes();
            for (int round = 0; round < 5; round++) {
                long t0 = System.nanoTime();
                for (int i = 0; i < sets; i++) nat.experts(eb[i]);
                double ms = (System.nanoTime() - t0) / 1e6 / sets;
                System.out.printf("cold sets %d: %.3f ms per layer step, %.1f GB/s%n", sets, ms, bytes / ms / 1e6);
            }
        }
    }
}
