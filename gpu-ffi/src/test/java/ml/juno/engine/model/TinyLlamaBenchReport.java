package ml.juno.engine.model;

import java.nio.file.Files;
import java.nio.file.Path;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.quantize.ProgressListener;
import ml.juno.engine.synth.Synth;
import ml.juno.engine.synth.SynthOptions;
import ml.juno.engine.synth.SynthPreset;
import org.junit.jupiter.api.Test;

/**
 * Speed report on TinyLlama-1.1B-shaped random models (diagnostic, asserts nothing; runs only with
 * {@code -Djuno.bench=Q4_0,Q8_0,...} and writes the models to {@code -Djuno.bench.dir}, default the temp dir).
 */
class TinyLlamaBenchReport {
    /** Runs the report outside Maven: {@code java -Djuno.bench=Q4_0 -cp classes:test-classes ...TinyLlamaBenchReport}. */
    public static void main(String[] args) throws Exception {
        new TinyLlamaBenchReport().report();
    }

    @Test
    void report() throws Exception {
        String types = System.getProperty("juno.bench");
        if (types == null) {
            return;
        }
        Path dir = Path.of(System.getProperty("juno.bench.dir", System.getProperty("java.io.tmpdir")));
        int threads = Integer.getInteger("juno.bench.threads", 2);
        int reps = Integer.getInteger("juno.bench.reps", 3);
        for (String type : types.split(",")) {
            Path file = dir.resolve("tinyllama-synth-" + type + ".gguf");
            if (!Files.exists(file)) {
                long t0 = System.nanoTime();
                Synth.run(new SynthOptions(SynthPreset.TINYLLAMA_1_1B, type, file, 1, null, threads), ProgressListener.NONE);
                System.out.printf("synth %s: %.1f s%n", type, (System.nanoTime() - t0) / 1e9);
            }
            try (GgufFile f = GgufFile.open(file);
                 Model m = Model.load(f, new EngineOptions(threads, 256, KvType.F32, 128, 1), Backends::select);
                 InferenceSession s = m.newSession()) {
                Bench b = new Bench(s);
                BenchResult pp = b.pp(128, reps);
                BenchResult tg = b.tg(64, reps);
                System.out.printf("%-7s %s %8.2f ± %5.2f tok/s | %s %8.2f ± %5.2f tok/s  %.1f GB/s (weights %.2f GB)%n", type,
                        pp.test(), pp.tokensPerSecond(), pp.stddev(), tg.test(), tg.tokensPerSecond(), tg.stddev(),
                        tg.gbPerSecond(), m.weightBytes() / 1e9);
            }
        }
    }
}
