package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.lora.BaseFingerprint;
import ml.juno.engine.lora.LoraAdapter;
import ml.juno.engine.lora.LoraAdapters;
import ml.juno.engine.lora.LoraFile;
import ml.juno.engine.lora.LoraPair;
import ml.juno.engine.model.block.Projection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Named LoRA adapters per request (vLLM's {@code --lora-modules}): concurrent requests with three different adapters
 * and none share the running batch, and each gets the greedy tokens it gets alone (with its adapter played on every
 * row); the same prompt under two adapters never shares prefix-cache blocks.
 */
public class LoraModulesEngineTest {
    @TempDir
    Path dir;

    public static Path adapter(Path dir, String name, Path model, List<Projection> targets, long seed) throws Exception {
        try (GgufFile f = GgufFile.open(model)) {
            BaseFingerprint fp = BaseFingerprint.of(f);
            SplittableRandom rnd = new SplittableRandom(seed);
            List<LoraPair> pairs = new ArrayList<>();
            for (int l = 0; l < fp.shapes().layers(); l++) {
                for (Projection t : targets) {
                    int[] d = LoraPair.dims(t, fp.shapes());
                    float[] a = new float[4 * d[0]];
                    float[] b = new float[d[1] * 4];
                    for (int i = 0; i < a.length; i++) {
                        a[i] = (float) rnd.nextDouble(-0.3, 0.3);
                    }
                    for (int i = 0; i < b.length; i++) {
                        b[i] = (float) rnd.nextDouble(-0.3, 0.3);
                    }
                    pairs.add(new LoraPair(l, t, 4, d[0], d[1], a, b));
                }
            }
            Path p = dir.resolve(name + ".lora");
            LoraFile.write(p, new LoraAdapter(new LoraAdapter.Header(LoraAdapter.FORMAT_VERSION, fp, EnumSet.copyOf(targets), 4, 8f,
                    false, Map.of()), pairs));
            return p;
        }
    }

    private static GenerationRequest request(int[] prompt, int n, int adapter) {
        return new GenerationRequest(prompt, SamplingParams.greedy(), StopCondition.of(n), 0, -1, adapter);
    }

    @Test
    void concurrentRequestsWithThreeAdaptersAndNone_eachGetTheirTokensAlone() throws Exception {
        Path model = InferenceEngineTest.model("stories260K.gguf");
        List<LoraAdapters.Module> modules = List.of(
                new LoraAdapters.Module("a", adapter(dir, "a", model, List.of(Projection.Q, Projection.V), 1)),
                new LoraAdapters.Module("b", adapter(dir, "b", model, List.of(Projection.O, Projection.DOWN), 2)),
                new LoraAdapters.Module("c", adapter(dir, "c", model, List.of(Projection.values()), 3)));
        String[] texts = {"Once upon a time", "Lily wanted to play", "The sun was hot", "There was a cat"};
        int steps = 24;
        // alone: each adapter played on every row of its own engine, one sequence at a time
        int[][][] alone = new int[4][texts.length][];
        int[][] prompts = new int[texts.length][];
        for (int a = 0; a < 4; a++) {
            EngineLora lora = a == 0 ? EngineLora.NONE : EngineLora.play(List.of(new LoraAdapters.Spec(modules.get(a - 1).path(), 1f)));
            try (InferenceEngine e = EngineAssembly.open(InferenceEngineTest.config("stories260K.gguf", 1), lora)) {
                for (int i = 0; i < texts.length; i++) {
                    prompts[i] = e.tokenizer().encode(texts[i]);
                    alone[a][i] = InferenceEngineTest.generate(e, prompts[i], steps, SamplingParams.greedy());
                }
            }
        }
        for (int i = 0; i < texts.length; i++) {
            assertFalse(Arrays.equals(alone[0][i], alone[3][i]), "adapter c changes the continuation of '" + texts[i] + "'");
        }
        // together: every prompt under every adapter (and none) at once, one engine, one batch
        try (InferenceEngine e = EngineAssembly.open(InferenceEngineTest.config("stories260K.gguf", 16), new EngineLora(List.of(), modules))) {
            InferenceEngineTest.Collect[][] sinks = new InferenceEngineTest.Collect[4][texts.length];
            for (int i = 0; i < texts.length; i++) {
                for (int a = 0; a < 4; a++) {
                    sinks[a][i] = new InferenceEngineTest.Collect();
                    InferenceEngineTest.submit(e, request(prompts[i], steps, a), sinks[a][i]);
                }
            }
            for (int a = 0; a < 4; a++) {
                for (int i = 0; i < texts.length; i++) {
                    sinks[a][i].await();
                    assertEquals(FinishReason.LENGTH, sinks[a][i].reason, sinks[a][i].message);
                    assertArrayEquals(alone[a][i], sinks[a][i].ids(), "adapter " + a + ", prompt '" + texts[i] + "'");
                }
            }
            // the same prompt again: served from the prefix cache of its own adapter only
            for (int a = 0; a < 4; a++) {
                InferenceEngineTest.Collect again = new InferenceEngineTest.Collect();
                InferenceEngineTest.submit(e, request(prompts[3], steps, a), again);
                assertArrayEquals(alone[a][3], again.await().ids(), "adapter " + a + " from the prefix cache");
            }
            assertThrows(IllegalArgumentException.class, () -> e.submit(request(prompts[0], 4, 4), new InferenceEngineTest.Collect()));
        }
    }
}
