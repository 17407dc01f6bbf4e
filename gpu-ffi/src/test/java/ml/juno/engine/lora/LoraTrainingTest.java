package ml.juno.engine.lora;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.step.StepBatch;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.block.Projection;
import org.junit.jupiter.api.Test;

/**
 * Training on the bundled stories260K: a sequence the model has never seen (seeded random tokens) gets a clearly lower
 * loss after 150 steps, the trained adapter played by the inference engine gives the trainer's loss, and the same seed
 * gives the same adapter bit for bit.
 */
class LoraTrainingTest {

    private static int[] unseen(int n, long seed) {
        java.util.SplittableRandom r = new java.util.SplittableRandom(seed);
        int[] t = new int[n];
        t[0] = 1;
        for (int i = 1; i < n; i++) {
            t[i] = 3 + r.nextInt(500);
        }
        return t;
    }

    /** Mean next-token cross-entropy of {@code tokens} as the inference engine computes the logits. */
    private static double engineLoss(GgufFile f, LoraAdapter a, int[] tokens) {
        try (Model m = Model.load(f, new EngineOptions(1, 128, KvType.F32, 128, 1), Backends::select); InferenceSession s = m.newSession()) {
            if (a != null) {
                LoraPlan.apply(m, List.of(new LoraPlan.Played(a, 1f, 0)));
            }
            StepBatch.Builder b = new StepBatch.Builder(128);
            for (int i = 0; i < tokens.length; i++) {
                b.add(0, i, tokens[i], i < tokens.length - 1);
            }
            var logits = s.forward(b.build());
            double loss = 0;
            for (int i = 0; i < tokens.length - 1; i++) {
                float[] row = logits.copyRow(i);
                double max = Double.NEGATIVE_INFINITY;
                for (float v : row) {
                    max = Math.max(max, v);
                }
                double sum = 0;
                for (float v : row) {
                    sum += Math.exp(v - max);
                }
                loss += Math.log(sum) + max - row[tokens[i + 1]];
            }
            return loss / (tokens.length - 1);
        }
    }

    private static LoraAdapter trainOnce(GgufFile f, LoraTrainer trainer, List<LoraTraining.Example> data, int steps, double[] curve) {
        LoraAdapter a = LoraTrainer.init(BaseFingerprint.of(f), List.of(Projection.Q, Projection.V, Projection.O, Projection.DOWN), 8, 16f,
                false, 5, Map.of("lr", "5e-3"));
        double[] losses = LoraTraining.train(trainer, a, data, new LoraTraining.Options(5e-3f, 0.01f, 10, steps, 1f, 5), null);
        System.arraycopy(losses, 0, curve, 0, losses.length);
        return a;
    }

    @Test
    void aFewHundredStepsLowerAnUnseenTextsLoss_playedByTheEngine_andTheSameSeedGivesTheSameAdapter() throws Exception {
        try (GgufFile f = GgufFile.open(LoraFixtures.model("stories260K.gguf")); CpuBackend backend = new CpuBackend(1)) {
            ModelConfig c = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f);
            LoraTrainer trainer = new LoraTrainer(f, c, backend);
            int[] text = unseen(48, 99);
            List<LoraTraining.Example> data = new ArrayList<>();
            data.add(LoraTraining.Example.text(text));
            LoraAdapter untrained = LoraTrainer.init(BaseFingerprint.of(f), List.of(Projection.Q), 8, 16f, false, 5, Map.of());
            double before = LoraTraining.evaluate(trainer, untrained, data);
            assertEquals(engineLoss(f, null, text), before, 1e-3, "the trainer's forward is the engine's (B = 0: the base)");

            int steps = 150;
            double[] curve = new double[steps];
            LoraAdapter a = trainOnce(f, trainer, data, steps, curve);
            double after = LoraTraining.evaluate(trainer, a, data);
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < steps; i += 15) {
                s.append(String.format(java.util.Locale.ROOT, " %d:%.3f", i, curve[i]));
            }
            System.out.printf(java.util.Locale.ROOT, "stories260K LoRA training: loss %.4f -> %.4f; curve%s%n", before, after, s);
            assertTrue(after < 0.5 * before, "loss " + before + " -> " + after);
            assertEquals(engineLoss(f, a, text), after, 2e-3, "the engine playing the trained adapter gives the trainer's loss");

            double[] again = new double[steps];
            LoraAdapter b = trainOnce(f, trainer, data, steps, again);
            assertArrayEquals(curve, again, "same seed, same losses");
            for (LoraPair p : a.pairs()) {
                assertArrayEquals(p.a(), b.pair(p.layer(), p.target()).a());
                assertArrayEquals(p.b(), b.pair(p.layer(), p.target()).b());
            }
        }
    }

    @Test
    void mixtureOfExpertsFfnTargets_areRefusedWithTheReason_attentionTargetsTrain() throws Exception {
        try (GgufFile f = GgufFile.open(LoraFixtures.model("tiny-qwen3moe-random-Q8_0.gguf")); CpuBackend backend = new CpuBackend(1)) {
            ModelConfig c = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f);
            LoraTrainer trainer = new LoraTrainer(f, c, backend);
            var e = assertThrows(IllegalArgumentException.class, () -> trainer.requireTrainable(List.of(Projection.Q, Projection.UP)));
            assertTrue(e.getMessage().contains("qwen3moe") && e.getMessage().contains("'up'") && e.getMessage().contains("mixture of 4 experts")
                    && e.getMessage().contains("q, k, v, o"), e.getMessage());
            LoraAdapter ffn = LoraTrainer.init(BaseFingerprint.of(f), List.of(Projection.DOWN), 2, 4f, false, 1, Map.of());
            int[] tokens = unseen(12, 4);
            boolean[] mask = new boolean[tokens.length];
            java.util.Arrays.fill(mask, true);
            var run = assertThrows(IllegalArgumentException.class, () -> trainer.run(ffn, tokens, mask, LoraTrainer.gradients(ffn), 1f));
            assertTrue(run.getMessage().contains("'down'"), run.getMessage());

            trainer.requireTrainable(List.of(Projection.Q, Projection.K, Projection.V, Projection.O));
            List<LoraTraining.Example> data = List.of(LoraTraining.Example.text(tokens));
            LoraAdapter a = LoraTrainer.init(BaseFingerprint.of(f), List.of(Projection.Q, Projection.V), 4, 8f, false, 2, Map.of());
            double before = LoraTraining.evaluate(trainer, a, data);
            LoraTraining.train(trainer, a, data, new LoraTraining.Options(2e-2f, 0f, 2, 30, 1f, 3), null);
            double after = LoraTraining.evaluate(trainer, a, data);
            assertTrue(after < 0.8 * before, "qwen3moe attention training lowers the loss: " + before + " -> " + after);
        }
    }
}
