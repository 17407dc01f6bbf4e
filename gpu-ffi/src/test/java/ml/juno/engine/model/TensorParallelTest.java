package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.block.LocalAllReduce;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * N tensor-parallel shards (each rank a slice of the heads, KV heads and FFN columns, on its own thread, partial sums
 * combined by a {@link LocalAllReduce}) give the whole model's logits.
 */
class TensorParallelTest {
    private static final int[] PROMPT = {1, 403, 407, 261, 378};
    private static final EngineOptions OPTIONS = new EngineOptions(1, 64, KvType.F32, 16, 1);

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (String file : List.of("stories260K.gguf", "tiny-llama-random-F32.gguf", "tiny-llama-random-F16.gguf",
                "tiny-qwen2-random-F16.gguf", "tiny-qwen3-random-F16.gguf", "tiny-qwen3moe-random-F16.gguf",
                "tiny-phi3-random-F16.gguf", "tiny-gemma3-random-F16.gguf")) {
            cases.add(Arguments.of(file, 2));
            cases.add(Arguments.of(file, 4));
        }
        return cases.stream();
    }

    /**
     * 1e-4 for F32 weights. F16 weights: the activations are rounded to F16 before each product (as llama.cpp does), so
     * a float-order difference of the partial sums that moves an activation across an F16 rounding boundary changes it
     * by one F16 ulp, which these random models amplify to a few 1e-3 on the logits (the same size as the F16 rounding noise
     * measured in ReferenceLogitsTest); those models get 5e-3·max(1, |logit|).
     */
    private static float tolerance(String file, float logit) {
        return file.contains("F16") ? 5e-3f * Math.max(1f, Math.abs(logit)) : 1e-4f;
    }

    /** Logits of the prompt's last row, then of one decode step, as one array. */
    private static float[] run(InferenceSession s) {
        StepBatch.Builder b = new StepBatch.Builder(16);
        b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, true);
        float[] first = s.forward(b.build()).copyRow(0);
        b.clear();
        b.add(0, PROMPT.length, 42, true);
        float[] second = s.forward(b.build()).copyRow(0);
        float[] both = java.util.Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, both, first.length, second.length);
        return both;
    }

    @ParameterizedTest(name = "{0} on {1} ranks")
    @MethodSource("cases")
    void tensorParallelRanks_giveTheWholeModelsLogits(String file, int parts) throws Exception {
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile(file))) {
            float[] whole;
            try (Model m = Model.load(f, OPTIONS, Backends::select); InferenceSession s = m.newSession()) {
                whole = run(s);
            }
            int layers = Architectures.forName(f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(f).dims().layers();
            LocalAllReduce reduce = new LocalAllReduce(parts);
            ExecutorService pool = Executors.newFixedThreadPool(parts);
            try {
                List<Future<float[]>> ranks = new ArrayList<>();
                for (int r = 0; r < parts; r++) {
                    int rank = r;
                    ranks.add(pool.submit(() -> {
                        try (Model m = Model.load(f, OPTIONS, new ShardSpec(0, layers, rank, parts), Backends::select, reduce.forRank(rank));
                             InferenceSession s = m.newSession()) {
                            return run(s);
                        }
                    }));
                }
                for (int r = 0; r < parts; r++) {
                    float[] ours = ranks.get(r).get(60, TimeUnit.SECONDS);
                    float maxDiff = 0;
                    float worst = 0;
                    for (int i = 0; i < whole.length; i++) {
                        float d = Math.abs(ours[i] - whole[i]);
                        maxDiff = Math.max(maxDiff, d);
                        worst = Math.max(worst, d / tolerance(file, whole[i]));
                    }
                    System.out.println(file + " on " + parts + " ranks, rank " + r + ": max |logit diff| " + maxDiff);
                    assertTrue(worst <= 1f, file + " rank " + r + "/" + parts + ": max |diff| " + maxDiff);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void tensorParallelShard_withoutAnAllReduce_isRefused() throws Exception {
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile("stories260K.gguf"))) {
            var e = assertThrows(IllegalArgumentException.class, () -> Model.load(f, OPTIONS, new ShardSpec(0, 5, 0, 2), Backends::select));
            assertTrue(e.getMessage().contains("all-reduce"), e.getMessage());
        }
    }

    @Test
    void headCountsThatDoNotSplit_areRefusedWithTheCounts() throws Exception {
        try (GgufFile f = GgufFile.open(ReferenceCase.modelFile("stories260K.gguf"))) {
            var e = assertThrows(IllegalArgumentException.class,
                    () -> Model.load(f, OPTIONS, new ShardSpec(0, 5, 0, 3), Backends::select, new LocalAllReduce(3).forRank(0)));
            assertEquals("cannot split 8 heads and 4 KV heads into 3 tensor-parallel slices", e.getMessage());
        }
    }
}
