package ml.juno.engine.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kv.KvType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The llama forward pass against llama.cpp's outputs for the same GGUF files and prompts (greedy, F32 KV). */
class LlamaReferenceTest {

    static Stream<ReferenceCase> cases() {
        return ReferenceCase.load("stories260K", "tiny-llama-random", "llama-2-tiny-random");
    }

    private static EngineOptions options() {
        return new EngineOptions(2, 512, KvType.F32, 64, 1);
    }

    private static void assertTopLogits(ReferenceCase c, String what, JsonNode top5, Logits l, int entry) {
        for (JsonNode pair : top5) {
            int id = pair.get(0).asInt();
            float ref = (float) pair.get(1).asDouble();
            float ours = l.get(entry, id);
            assertTrue(Math.abs(ours - ref) <= c.tolerance(ref),
                    () -> c + " " + what + ": token " + id + " logit " + ours + " vs llama.cpp " + ref);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void promptLogits_matchLlamaCpp(ReferenceCase c) throws Exception {
        int[] prompt = c.ints("prompt_tokens");
        try (GgufFile f = GgufFile.open(c.model()); Model m = Model.load(f, options()); InferenceSession s = m.newSession()) {
            ForwardBatch b = new ForwardBatch(64);
            for (int i = 0; i < prompt.length; i++) {
                b.add(0, i, prompt[i], true);
            }
            Logits l = s.forward(b);
            JsonNode top = c.json().get("prompt_top5_logits");
            for (int i = 0; i < prompt.length; i++) {
                assertTopLogits(c, "prompt position " + i, top.get(i), l, i);
            }
            if (c.json().has("first_generated_position_full_logits")) {
                float[] full = c.floats("first_generated_position_full_logits");
                int last = prompt.length - 1;
                for (int t = 0; t < full.length; t++) {
                    float ours = l.get(last, t);
                    float ref = full[t];
                    int tok = t;
                    assertTrue(Math.abs(ours - ref) <= c.tolerance(ref),
                            () -> c + " full logits: token " + tok + " logit " + ours + " vs llama.cpp " + ref);
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void generatedLogits_matchLlamaCpp_whenFedTheReferenceTokens(ReferenceCase c) throws Exception {
        int[] prompt = c.ints("prompt_tokens");
        int[] gen = c.ints("generated_tokens");
        JsonNode top = c.json().get("generated_top5_logits");
        try (GgufFile f = GgufFile.open(c.model()); Model m = Model.load(f, options()); InferenceSession s = m.newSession()) {
            ForwardBatch b = new ForwardBatch(64);
            b.addPrompt(0, 0, prompt, 0, prompt.length, true);
            Logits l = s.forward(b);
            for (int k = 0; k < top.size(); k++) {
                assertTopLogits(c, "generated step " + k, top.get(k), l, 0);
                b.clear();
                b.add(0, prompt.length + k, gen[k], true);
                l = s.forward(b);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void greedyTokens_matchLlamaCpp_untilTheGapIsBelowTheTolerance(ReferenceCase c) throws Exception {
        int[] prompt = c.ints("prompt_tokens");
        int[] ref = c.ints("generated_tokens");
        float[] gaps = c.floats("generated_top1_top2_gap");
        try (GgufFile f = GgufFile.open(c.model()); Model m = Model.load(f, options()); InferenceSession s = m.newSession()) {
            GenerationResult r = s.generate(prompt, ref.length, 5);
            int binding = 0;
            while (binding < ref.length) {
                float top1 = r.topLogits().get(binding)[0].logit();
                if (gaps[binding] <= 2 * c.tolerance(top1)) {
                    break;
                }
                binding++;
            }
            int[] ours = java.util.Arrays.copyOf(r.tokens(), binding);
            assertArrayEquals(java.util.Arrays.copyOf(ref, binding), ours, c + ": first " + binding + " tokens");
            if (c.weightKind().equals("F32") || c.name().startsWith("stories260K")) {
                assertTrue(binding > 0, c + ": no binding tokens");
            }
            System.out.println(c + ": " + binding + "/" + ref.length + " tokens bind and match");
        }
    }
}
