package ml.juno.engine.kernel.cpu;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.ExpertBatch;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.block.GatedFfn;
import ml.juno.engine.model.block.MoeFfn;
import org.junit.jupiter.api.Test;

/**
 * A decode step's experts (one row, the model's top-k) through {@link CpuBackend#experts} with the weights out of the
 * caches (diagnostic; runs only with {@code -Djuno.ecold=MODEL.gguf}, {@code -Djuno.ecold.threads}): every layer's
 * experts cut into sets of top-k different ones, all sets run one after another, so no set's weights are in the
 * caches when it runs (unlike {@link ExpertSpeedReport}, which repeats one set). The file's pages must be in memory
 * (the first round faults them in). Prints the time per layer step and the weight bytes per second, per round.
 */
class ExpertColdReport {
    @Test
    void report() throws Exception {
        String model = System.getProperty("juno.ecold");
        if (model == null) {
            return;
        }
        int threads = Integer.getInteger("juno.ecold.threads", 2);
        NativeKernels.Loaded l = NativeKernels.load();
        try (GgufFile f = GgufFile.open(Path.of(model));
             Model m = Model.load(f, new EngineOptions(1, 64, KvType.F16, 64, 1), t -> new CpuBackend(1, null));
             CpuBackend nat = new CpuBackend(threads, l.kernels())) {
            List<MoeFfn> layers = m.decoder().moeLayers();
            GatedFfn[] first = layers.getFirst().experts();
            int used = layers.getFirst().used();
            int dim = first[0].gate().cols();
            int width = first[0].width();
            float[] x = new float[dim];
            Random rnd = new Random(1);
            for (int i = 0; i < dim; i++) {
                x[i] = (float) rnd.nextGaussian();
            }
            int[] choices = new int[used];
            for (int k = 0; k < used; k++) {
                choices[k] = k;
            }
            float[] weights = new float[used];
            Arrays.fill(weights, 1f / used);
            float[] mixed = new float[used * dim];
            int sets = layers.size() * (first.length / used);
            ExpertBatch[] batches = new ExpertBatch[sets];
            int s = 0;
            for (MoeFfn layer : layers) {
                GatedFfn[] ex = layer.experts();
                for (int g = 0; g < ex.length / used; g++, s++) {
                    batches[s] = new ExpertBatch(ex.length, dim, used, new ExpertBatch.Buffers(x, choices, weights, mixed,
                            new float[dim], new float[dim], new float[width], new float[width]));
                    batches[s].clear(false);
                    for (int k = 0; k < used; k++) {
                        GatedFfn e = ex[g * used + k];
                        batches[s].add(g * used + k, e.gate(), e.up(), e.down(), k, 1);
                    }
                }
            }
            long bytes = 0;
            for (int k = 0; k < used; k++) {
                bytes += first[k].weightBytes();
            }
            System.out.printf("%s: %d sets of %d experts (1 row), %d threads, %s%n", Path.of(model).getFileName(), sets, used,
                    threads, l.kernels().isa());
            for (int round = 0; round < 5; round++) {
                long t0 = System.nanoTime();
                for (ExpertBatch b : batches) {
                    nat.experts(b);
                }
                double ms = (System.nanoTime() - t0) / 1e6 / sets;
                System.out.printf("  round %d%s: %.3f ms per layer step, %.1f GB/s%n", round, round == 0 ? " (faults pages in)" : "",
                        ms, bytes / ms / 1e6);
            }
        }
    }
}
