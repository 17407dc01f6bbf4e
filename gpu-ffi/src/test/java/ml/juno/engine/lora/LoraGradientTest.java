package ml.juno.engine.lora;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Consumer;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufValueType;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.quantize.GgufStreamWriter;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The backward pass of {@link LoraTrainer} against central finite differences of its loss, on the tiny random models
 * of every architecture the trainer runs, decoded to F32: A and B of every target type it trains (q, k, v, o, gate,
 * up, down; q, k, v, o on qwen3moe's mixture of experts) in the first and the last layer. The sequence is longer than
 * gemma3's sliding window (16), so its local layer's mask is in play; a gemma3 variant without the window has its
 * final logits soft-capped. A wrong transpose, a missing bias, norm or post-norm term, a wrong GELU derivative or a
 * missing router term is off by far more than the tolerance. On the mixture of experts a probe whose ±h runs route
 * some token to other experts (the loss jumps there: the two one-sided differences disagree) is drawn again, a few at
 * most.
 */
class LoraGradientTest {
    private static final int[] TOKENS = {1, 403, 407, 261, 378, 9, 77, 300, 12, 45, 211, 5, 480, 33, 98, 150, 402, 7, 260, 19, 88, 301};
    private static final List<Projection> ALL = List.of(Projection.values());
    private static final List<Projection> ATTENTION = List.of(Projection.Q, Projection.K, Projection.V, Projection.O);

    /** {@code routed}: a mixture of experts, whose top-k choice makes the loss jump where a choice flips. */
    record Case(String name, String file, Consumer<List<GgufStreamWriter.Entry>> edit, List<Projection> targets, boolean routed) {
        Case(String name, String file, Consumer<List<GgufStreamWriter.Entry>> edit, List<Projection> targets) {
            this(name, file, edit, targets, false);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> models() {
        return Stream.of(
                new Case("llama", "tiny-llama-random-F16.gguf", md -> {}, ALL),
                new Case("qwen2 (q/k/v biases)", "tiny-qwen2-random-F16.gguf", md -> {}, ALL),
                new Case("qwen3 (per-head q/k norms)", "tiny-qwen3-random-F16.gguf", md -> {}, ALL),
                new Case("phi3 (fused qkv and gate-up)", "tiny-phi3-random-F16.gguf", md -> {}, ALL),
                new Case("gemma3 (post-norms, GELU, scaled embeddings, sliding window)", "tiny-gemma3-random-F16.gguf", md -> {}, ALL),
                new Case("gemma3 without a window, logits soft-capped", "tiny-gemma3-random-F16.gguf", LoraGradientTest::softcapped, ALL),
                new Case("qwen3moe (attention targets through the experts and router)", "tiny-qwen3moe-random-F16.gguf", md -> {},
                        ATTENTION, true));
    }

    /** gemma3 with global attention only, which turns its final logit soft cap on (at 2: well inside tanh's bend). */
    static void softcapped(List<GgufStreamWriter.Entry> md) {
        md.removeIf(e -> e.key().equals(GgufKeys.arch("gemma3", GgufKeys.ATTENTION_SLIDING_WINDOW))
                || e.key().equals(GgufKeys.arch("gemma3", GgufKeys.FINAL_LOGIT_SOFTCAPPING)));
        md.add(new GgufStreamWriter.Entry(GgufKeys.arch("gemma3", GgufKeys.FINAL_LOGIT_SOFTCAPPING), GgufValueType.FLOAT32, 2f));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("models")
    void gradientsOfEveryTarget_matchFiniteDifferences(Case m, @TempDir Path dir) throws Exception {
        Path f32 = dir.resolve("f32.gguf");
        try (GgufFile src = GgufFile.open(LoraFixtures.model(m.file()))) {
            LoraFixtures.writeF32Copy(src, f32, m.edit());
        }
        try (GgufFile f = GgufFile.open(f32); CpuBackend backend = new CpuBackend(1)) {
            ModelConfig c = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f);
            LoraTrainer trainer = new LoraTrainer(f, c, backend);
            trainer.smoothGelu(true);
            LoraAdapter a = LoraFixtures.random(f, m.targets(), 2, 4f, false, 17, 0.2f);
            boolean[] mask = new boolean[TOKENS.length];
            java.util.Arrays.fill(mask, 0, TOKENS.length - 1, true);
            LoraTrainer.Gradients g = LoraTrainer.gradients(a);
            double loss = trainer.run(a, TOKENS, mask, g, 1f);
            assertTrue(loss > 0 && Double.isFinite(loss), "loss " + loss);
            int last = c.dims().layers() - 1;
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(3);
            double worst = 0;
            int redrawn = 0;
            for (int layer : new int[] {0, last}) {
                for (Projection t : m.targets()) {
                    LoraPair p = a.pair(layer, t);
                    for (int which = 0; which < 2; which++) {
                        float[] param = which == 0 ? p.a() : p.b();
                        float[] grad = which == 0 ? g.a(p) : g.b(p);
                        String what = m + ": layer " + layer + " " + t.shortName + (which == 0 ? " A" : " B");
                        float gmax = 0;
                        for (float v : grad) {
                            gmax = Math.max(gmax, Math.abs(v));
                        }
                        assertTrue(gmax > 0, what + " has a zero gradient");
                        for (int probe = 0; probe < 3; probe++) {
                            int i = rnd.nextInt(param.length);
                            float keep = param[i];
                            float h = 1e-2f;
                            param[i] = keep + h;
                            double up = trainer.run(a, TOKENS, mask, null, 1f);
                            param[i] = keep - h;
                            double down = trainer.run(a, TOKENS, mask, null, 1f);
                            param[i] = keep;
                            if (m.routed() && Math.abs((up - loss) - (loss - down)) > 0.2 * Math.max(Math.abs(up - loss), Math.abs(loss - down))) {
                                redrawn++;
                                probe--;
                                continue;
                            }
                            double fd = (up - down) / (2 * h);
                            double err = Math.abs(fd - grad[i]) / Math.max(Math.max(Math.abs(fd), Math.abs(grad[i])), 0.05 * gmax);
                            worst = Math.max(worst, err);
                            assertTrue(err < 2e-2, what + "[" + i + "]: analytic " + grad[i] + ", finite difference " + fd + " (rel err " + err + ")");
                        }
                    }
                }
            }
            int probes = 2 * m.targets().size() * 2 * 3;
            System.out.printf("%s: loss %.4f, worst relative error %.2g over %d probes (%d redrawn)%n", m, loss, worst, probes, redrawn);
            assertTrue(redrawn <= probes / 8, redrawn + " probes hit a routing flip");
        }
    }
}
