package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.cpu.ScalarBackend;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.block.LocalAllReduce;
import ml.juno.engine.step.StepBatch;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every architecture (llama: stories260K and its F16/Q8_0/Q4_0 versions, every block type of the tiny random llama,
 * llama-2-tiny-random; qwen2, qwen3, qwen3moe, phi3, gemma3: F16, Q8_0, Q4_K_M each) against llama.cpp's outputs for the same files
 * and prompts: prompt ids, every prompt position's top-5 logits, the full logit vector after the prompt, the top-5
 * logits of the generated steps (fed the reference tokens) and the greedy tokens up to the first step whose top-1/top-2
 * gap is within the tolerance. Each model file is loaded once for the whole class.
 *
 * <p>Tolerance. The top-5 logits (every prompt position, every generated step) and the greedy tokens are held to the
 * brief's tolerance, 1e-3·max(1,|x|) for F16 and 2e-2 for quantized files.
 * The full logit vector after the prompt, which the brief does not ask for, is held to that or to twice this case's
 * <em>rounding noise</em> when that is larger. The noise is measured here: the largest logit difference between this
 * engine's vector and scalar backends, between the whole model and two tensor-parallel ranks (three computations that
 * differ only in float summation order), and the logit change when the hidden states after layer 0 move by one ulp.
 * Rounding activations to F16 (F16 weights), quantizing them to Q8 blocks, and ggml's F16 GELU table are
 * discontinuous, so a one-ulp order difference that moves a value across a rounding boundary changes it by a whole
 * F16/Q8 step, and these random models amplify that to 1e-3..1e-1 on the logits. The engine therefore follows the
 * llama.cpp build that made the references (AVX-512): F32/F16 rows summed in tinyBLAS's 16 lanes (ggml_vec_dot_f16's
 * order for F16 rows that are not a multiple of 16), ggml's vector exp in SiLU and softmax, the same integer block sums
 * for quantized rows (for Q6_K in ggml's own eight integer lanes, which one case needs), expert outputs added in rank
 * order. The prompt rows then match to about 1e-6 in almost every
 * case. Single-token steps differ more (up to 0.35× the brief's F16 tolerance): for a one-row product llama.cpp
 * evidently uses ggml_vec_dot_f16's order (a probe that did so for single rows made most of those steps match to
 * 1e-6), which this engine does not follow, because a row's result must not depend on what shares its batch.
 */
class ReferenceLogitsTest {
    private static final Map<Path, GgufFile> FILES = new HashMap<>();
    private static final Map<Path, Model> MODELS = new HashMap<>();
    private static final Map<String, Float> NOISE = new HashMap<>();
    private static final EngineOptions OPTIONS = new EngineOptions(2, 512, KvType.F32, 64, 1);

    static Stream<ReferenceCase> cases() {
        return ReferenceCase.load("stories260K", "tiny-llama-random", "llama-2-tiny-random", "tiny-qwen2-", "tiny-qwen3-",
                "tiny-qwen3moe-", "tiny-phi3-", "tiny-gemma3-");
    }

    private static synchronized Model model(ReferenceCase c) throws Exception {
        Model m = MODELS.get(c.model());
        if (m == null) {
            GgufFile f = GgufFile.open(c.model());
            FILES.put(c.model(), f);
            m = Model.load(f, OPTIONS, Backends::select);
            MODELS.put(c.model(), m);
        }
        return m;
    }

    /** Largest |vector − scalar backend| logit difference over every prompt position of {@code c}. */
    private static synchronized float noise(ReferenceCase c) throws Exception {
        Float n = NOISE.get(c.name());
        if (n == null) {
            Model vec = model(c);
            int[] prompt = c.ints("prompt_tokens");
            StepBatch.Builder b = new StepBatch.Builder(64);
            for (int i = 0; i < prompt.length; i++) {
                b.add(0, i, prompt[i], true);
            }
            float max = 0;
            try (Model ref = Model.load(FILES.get(c.model()), OPTIONS, ShardSpec.whole(vec.config().dims().layers()), t -> new ScalarBackend());
                 InferenceSession a = vec.newSession();
                 InferenceSession s = ref.newSession()) {
                Logits la = a.forward(b.build());
                float[][] rows = new float[prompt.length][];
                for (int i = 0; i < prompt.length; i++) {
                    rows[i] = la.copyRow(i);
                }
                Logits lb = s.forward(b.build());
                for (int i = 0; i < prompt.length; i++) {
                    float[] other = lb.copyRow(i);
                    for (int t = 0; t < other.length; t++) {
                        max = Math.max(max, Math.abs(rows[i][t] - other[t]));
                    }
                }
            }
            float tp = tensorParallelDifference(c, b, prompt.length, vec);
            float ulp = oneUlpDifference(c, b, prompt.length, vec);
            n = Math.max(max, Math.max(tp, ulp));
            NOISE.put(c.name(), n);
            System.out.println(c + ": rounding noise: vector vs scalar backend " + max + ", whole vs 2 tensor-parallel ranks " + tp
                    + ", hidden states after layer 0 moved by one ulp " + ulp);
        }
        return n;
    }

    /**
     * Largest |whole model − 2 tensor-parallel ranks| logit difference: a third summation order (partial sums of half the
     * heads and half the FFN, then added). 0 when the head counts do not split in two.
     */
    private static float tensorParallelDifference(ReferenceCase c, StepBatch.Builder b, int rows, Model whole) throws Exception {
        int layers = whole.config().dims().layers();
        var a = whole.config().attention();
        if (a.heads() % 2 != 0 || a.kvHeads() % 2 != 0 && a.kvHeads() != 1) {
            return 0f;
        }
        float[][] ref = new float[rows][];
        try (InferenceSession s = whole.newSession()) {
            Logits l = s.forward(b.build());
            for (int i = 0; i < rows; i++) {
                ref[i] = l.copyRow(i);
            }
        }
        LocalAllReduce reduce = new LocalAllReduce(2);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            java.util.List<java.util.concurrent.Future<float[][]>> ranks = new java.util.ArrayList<>();
            for (int r = 0; r < 2; r++) {
                int rank = r;
                ranks.add(pool.submit(() -> {
                    try (Model m = Model.load(FILES.get(c.model()), OPTIONS, new ShardSpec(0, layers, rank, 2), Backends::select, reduce.forRank(rank));
                         InferenceSession s = m.newSession()) {
                        Logits l = s.forward(b.build());
                        float[][] out = new float[rows][];
                        for (int i = 0; i < rows; i++) {
                            out[i] = l.copyRow(i);
                        }
                        return out;
                    }
                }));
            }
            float[][] rank0;
            try {
                rank0 = ranks.get(0).get(60, java.util.concurrent.TimeUnit.SECONDS);
                ranks.get(1).get(60, java.util.concurrent.TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (e.getCause() instanceof IllegalArgumentException) {
                    return 0f; // this file's blocks cannot be split in two (e.g. 256-wide K-quant blocks over 128 columns)
                }
                throw e;
            }
            float max = 0;
            for (int i = 0; i < rows; i++) {
                for (int t = 0; t < ref[i].length; t++) {
                    max = Math.max(max, Math.abs(ref[i][t] - rank0[i][t]));
                }
            }
            return max;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Largest logit change when every hidden state after layer 0 moves by one ulp (two pipeline shards, the hand-over
     * nudged with {@link Math#nextUp}): how far this model amplifies a rounding-size difference, whatever its head counts
     * or block sizes. 0 for one-layer models.
     */
    private static float oneUlpDifference(ReferenceCase c, StepBatch.Builder b, int rows, Model whole) throws Exception {
        int layers = whole.config().dims().layers();
        if (layers < 2) {
            return 0f;
        }
        int dim = whole.config().dims().embedding();
        GgufFile f = FILES.get(c.model());
        try (Model first = Model.load(f, OPTIONS, new ShardSpec(0, 1, 0, 1), Backends::select);
             Model rest = Model.load(f, OPTIONS, new ShardSpec(1, layers, 0, 1), Backends::select);
             InferenceSession s1 = first.newSession();
             InferenceSession s2 = rest.newSession();
             InferenceSession sw = whole.newSession()) {
            Logits lw = sw.forward(b.build());
            float[][] ref = new float[rows][];
            for (int i = 0; i < rows; i++) {
                ref[i] = lw.copyRow(i);
            }
            s1.forward(b.build());
            float[] h = s2.hiddenStates();
            System.arraycopy(s1.hiddenStates(), 0, h, 0, rows * dim);
            for (int i = 0; i < rows * dim; i++) {
                h[i] = Math.nextUp(h[i]);
            }
            Logits l = s2.forward(b.build());
            float max = 0;
            for (int i = 0; i < rows; i++) {
                for (int t = 0; t < ref[i].length; t++) {
                    max = Math.max(max, Math.abs(ref[i][t] - l.get(i, t)));
                }
            }
            return max;
        }
    }

    /**
     * Per case: the largest |ours − llama.cpp| over the top-5 logits and over the full vector, each with its largest
     * ratio to the brief's tolerance (printed at the end).
     */
    private static final Map<String, float[]> WORST = new java.util.TreeMap<>();

    private static synchronized void record(ReferenceCase c, float ours, float ref, boolean top5) {
        float[] w = WORST.computeIfAbsent(c.name(), k -> new float[4]);
        int at = top5 ? 0 : 2;
        float d = Math.abs(ours - ref);
        w[at] = Math.max(w[at], d);
        w[at + 1] = Math.max(w[at + 1], d / c.strictTolerance(ref));
    }


    /** The brief's tolerance. */
    private static float briefTolerance(ReferenceCase c, float logit) {
        return c.strictTolerance(logit);
    }

    private static float tolerance(ReferenceCase c, float logit) throws Exception {
        return Math.max(c.strictTolerance(logit), 2 * noise(c));
    }

    @AfterAll
    static void closeModels() throws Exception {
        WORST.forEach((name, w) -> System.out.printf("deviation from llama.cpp: %-50s top-5 %.2e = %.2f x the brief's tolerance;"
                + " full vector %.2e = %.2f x%n", name, w[0], w[1], w[2], w[3]));
        for (Model m : MODELS.values()) {
            m.close();
        }
        for (GgufFile f : FILES.values()) {
            f.close();
        }
    }

    private static void assertTopLogits(ReferenceCase c, String what, JsonNode top5, Logits l, int entry) throws Exception {
        for (JsonNode pair : top5) {
            int id = pair.get(0).asInt();
            float ref = (float) pair.get(1).asDouble();
            float ours = l.get(entry, id);
            record(c, ours, ref, true);
            assertTrue(Math.abs(ours - ref) <= briefTolerance(c, ref),
                    () -> c + " " + what + ": token " + id + " logit " + ours + " vs llama.cpp " + ref);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void promptLogits_matchLlamaCpp(ReferenceCase c) throws Exception {
        int[] prompt = c.ints("prompt_tokens");
        assertArrayEquals(c.ints("llama_tokenize_cli_ids"), prompt, c + ": reference prompt ids disagree");
        try (InferenceSession s = model(c).newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(64);
            for (int i = 0; i < prompt.length; i++) {
                b.add(0, i, prompt[i], true);
            }
            Logits l = s.forward(b.build());
            JsonNode top = c.json().get("prompt_top5_logits");
            for (int i = 0; i < prompt.length; i++) {
                assertTopLogits(c, "prompt position " + i, top.get(i), l, i);
            }
            if (!c.json().has("first_generated_position_full_logits")) {
                return;
            }
            float[] full = c.floats("first_generated_position_full_logits");
            int last = prompt.length - 1;
            for (int t = 0; t < full.length; t++) {
                float ours = l.get(last, t);
                float ref = full[t];
                int tok = t;
                record(c, ours, ref, false);
                assertTrue(Math.abs(ours - ref) <= tolerance(c, ref),
                        () -> c + " full logits: token " + tok + " logit " + ours + " vs llama.cpp " + ref);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void generatedLogits_matchLlamaCpp_whenFedTheReferenceTokens(ReferenceCase c) throws Exception {
        int[] prompt = c.ints("prompt_tokens");
        int[] gen = c.ints("generated_tokens");
        JsonNode top = c.json().get("generated_top5_logits");
        try (InferenceSession s = model(c).newSession()) {
            StepBatch.Builder b = new StepBatch.Builder(64);
            b.addPrompt(0, 0, prompt, 0, prompt.length, true);
            Logits l = s.forward(b.build());
            for (int k = 0; k < top.size(); k++) {
                assertTopLogits(c, "generated step " + k, top.get(k), l, 0);
                b.clear();
                b.add(0, prompt.length + k, gen[k], true);
                l = s.forward(b.build());
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void greedyTokens_matchLlamaCpp_untilTheGapIsBelowTheTolerance(ReferenceCase c) throws Exception {
        int[] prompt = c.ints("prompt_tokens");
        int[] ref = c.ints("generated_tokens");
        float[] gaps = c.floats("generated_top1_top2_gap");
        try (InferenceSession s = model(c).newSession()) {
            GenerationResult r = s.generate(prompt, ref.length, 5);
            int binding = 0;
            while (binding < ref.length) {
                float top1 = r.topLogits().get(binding)[0].logit();
                if (gaps[binding] <= 2 * briefTolerance(c, top1)) {
                    break;
                }
                binding++;
            }
            assertArrayEquals(Arrays.copyOf(ref, binding), Arrays.copyOf(r.tokens(), binding), c + ": first " + binding + " tokens");
            System.out.println(c + ": " + binding + "/" + ref.length + " tokens bind and match");
        }
    }
}
