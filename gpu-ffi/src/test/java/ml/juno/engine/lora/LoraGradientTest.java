package ml.juno.engine.lora;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.block.Projection;
import org.junit.jupiter.api.Test;

/**
 * The backward pass of {@link LoraTrainer} against central finite differences of its loss, on a tiny random F32
 * llama, for A and B of every target type (q, k, v, o, gate, up, down) in the first and the last layer.
 */
class LoraGradientTest {
    private static final int[] TOKENS = {1, 403, 407, 261, 378, 9, 77, 300, 12};

    @Test
    void gradientsOfEveryTarget_matchFiniteDifferences() throws Exception {
        try (GgufFile f = GgufFile.open(LoraFixtures.model("tiny-llama-random-F32.gguf")); CpuBackend backend = new CpuBackend(1)) {
            ModelConfig c = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f);
            LoraTrainer trainer = new LoraTrainer(f, c, backend);
            LoraAdapter a = LoraFixtures.random(f, List.of(Projection.values()), 2, 4f, false, 17, 0.2f);
            boolean[] mask = new boolean[TOKENS.length];
            java.util.Arrays.fill(mask, 0, TOKENS.length - 1, true);
            LoraTrainer.Gradients g = LoraTrainer.gradients(a);
            double loss = trainer.run(a, TOKENS, mask, g, 1f);
            assertTrue(loss > 0 && Double.isFinite(loss), "loss " + loss);
            int last = c.dims().layers() - 1;
            java.util.SplittableRandom rnd = new java.util.SplittableRandom(3);
            for (int layer : new int[] {0, last}) {
                for (Projection t : Projection.values()) {
                    LoraPair p = a.pair(layer, t);
                    for (int which = 0; which < 2; which++) {
                        float[] param = which == 0 ? p.a() : p.b();
                        float[] grad = which == 0 ? g.a(p) : g.b(p);
                        float gmax = 0;
                        for (float v : grad) {
                            gmax = Math.max(gmax, Math.abs(v));
                        }
                        assertTrue(gmax > 0, "layer " + layer + " " + t + (which == 0 ? " A" : " B") + " has a zero gradient");
                        for (int probe = 0; probe < 3; probe++) {
                            int i = rnd.nextInt(param.length);
                            float keep = param[i];
                            float h = 1e-2f;
                            param[i] = keep + h;
                            double up = trainer.run(a, TOKENS, mask, null, 1f);
                            param[i] = keep - h;
                            double down = trainer.run(a, TOKENS, mask, null, 1f);
                            param[i] = keep;
                            double fd = (up - down) / (2 * h);
                            double err = Math.abs(fd - grad[i]) / Math.max(Math.max(Math.abs(fd), Math.abs(grad[i])), 0.05 * gmax);
                            System.out.printf("layer %d %-4s %s[%d]: analytic %.6g, numeric %.6g, rel err %.2g%n", layer, t.shortName,
                                    which == 0 ? "A" : "B", i, grad[i], fd, err);
                            assertTrue(err < 2e-2, "layer " + layer + " " + t + (which == 0 ? " A" : " B") + "[" + i + "]: analytic "
                                    + grad[i] + ", finite difference " + fd);
                        }
                    }
                }
            }
        }
    }
}
