package ml.juno.engine.lora;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The trainer's forward pass is the inference engine's: on the tiny random model of each architecture, with a random
 * adapter on every target the trainer takes (attention only on qwen3moe) played by the engine, the trainer's logits at
 * every position of a sequence longer than gemma3's sliding window equal the engine's prefill logits (the trainer runs
 * the engine's kernels, its attention included, so they come out bit for bit equal on this machine; the bound leaves
 * 1e-5 of the largest logit), and greedy argmaxes agree. On F16 and Q8_0 bases, whose products round the activations,
 * any stray difference upstream would show here far above that bound.
 */
class LoraTrainerParityTest {
    private static final int[] TOKENS = {1, 403, 407, 261, 378, 9, 77, 300, 12, 45, 211, 5, 480, 33, 98, 150, 402, 7, 260, 19, 88, 301, 64, 2};
    private static final List<Projection> ALL = List.of(Projection.values());
    private static final List<Projection> ATTENTION = List.of(Projection.Q, Projection.K, Projection.V, Projection.O);

    record Case(String file, List<Projection> targets, boolean softcapped) {
        @Override
        public String toString() {
            return file + (softcapped ? " (no window, soft-capped logits)" : "");
        }
    }

    static Stream<Case> models() {
        return Stream.of(new Case("tiny-llama-random-F16.gguf", ALL, false), new Case("tiny-llama-random-Q4_K_M.gguf", ALL, false),
                new Case("tiny-qwen2-random-F16.gguf", ALL, false), new Case("tiny-qwen3-random-Q8_0.gguf", ALL, false),
                new Case("tiny-phi3-random-F16.gguf", ALL, false), new Case("tiny-gemma3-random-F16.gguf", ALL, false),
                new Case("tiny-gemma3-random-F16.gguf", ALL, true), new Case("tiny-qwen3moe-random-F16.gguf", ATTENTION, false));
    }

    /** The engine's logits of every position of {@code tokens}, one prefill, {@code a} played. */
    private static float[] engineLogits(GgufFile f, LoraAdapter a, int[] tokens, int vocab) {
        try (Model m = Model.load(f, new EngineOptions(1, 64, KvType.F32, 64, 1), Backends::select); InferenceSession s = m.newSession()) {
            LoraPlan.apply(m, List.of(new LoraPlan.Played(a, 1f, 0)));
            StepBatch.Builder b = new StepBatch.Builder(64);
            for (int i = 0; i < tokens.length; i++) {
                b.add(0, i, tokens[i], true);
            }
            var logits = s.forward(b.build());
            float[] all = new float[tokens.length * vocab];
            for (int i = 0; i < tokens.length; i++) {
                System.arraycopy(logits.copyRow(i), 0, all, i * vocab, vocab);
            }
            return all;
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void trainerLogits_equalTheEnginePlayingTheSameAdapter(Case m, @TempDir Path dir) throws Exception {
        Path path = LoraFixtures.model(m.file());
        if (m.softcapped()) {
            path = dir.resolve("softcapped.gguf");
            try (GgufFile src = GgufFile.open(LoraFixtures.model(m.file()))) {
                LoraFixtures.writeF32Copy(src, path, LoraGradientTest::softcapped);
            }
        }
        try (GgufFile f = GgufFile.open(path); Backend backend = Backends.select(1)) {
            ModelConfig c = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f);
            int vocab = c.dims().vocab();
            LoraAdapter a = LoraFixtures.random(f, m.targets(), 4, 8f, false, 23, 0.05f);
            float[] engine = engineLogits(f, a, TOKENS, vocab);
            float[] trainer = new LoraTrainer(f, c, backend).logits(a, TOKENS);
            assertEquals(engine.length, trainer.length);
            float scale = 0;
            float diff = 0;
            for (int i = 0; i < engine.length; i++) {
                scale = Math.max(scale, Math.abs(engine[i]));
                diff = Math.max(diff, Math.abs(engine[i] - trainer[i]));
            }
            float[] base = engineLogits(f, LoraFixtures.random(f, m.targets(), 4, 8f, false, 23, 0f), TOKENS, vocab);
            float moved = LoraPlayTest.maxDiff(base, engine);
            System.out.printf("%s: max |logit| %.3f, adapter moves logits by %.3g, trainer − engine max %.3g%n", m, scale, moved, diff);
            assertTrue(moved > 100 * diff, "the adapter changes the logits (" + moved + ") far more than trainer and engine differ");
            assertTrue(diff <= 1e-5f * Math.max(1f, scale), m + ": trainer and engine logits differ by " + diff + " (max |logit| " + scale + ")");
            for (int i = 0; i < TOKENS.length; i++) {
                assertEquals(argmax(engine, i * vocab, vocab), argmax(trainer, i * vocab, vocab), "greedy token after position " + i);
            }
        }
    }

    private static int argmax(float[] x, int from, int n) {
        int best = 0;
        for (int i = 1; i < n; i++) {
            if (x[from + i] > x[from + best]) {
                best = i;
            }
        }
        return best;
    }
}
