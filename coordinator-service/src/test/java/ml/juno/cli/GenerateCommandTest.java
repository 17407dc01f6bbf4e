package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class GenerateCommandTest {
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", "../models"));
    static final String STORIES = MODELS.resolve("stories260K.gguf").toString();

    @Test
    void json_greedyOnStories260K_matchesLlamaCppTokensAndTopLogits() throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        JsonNode ref = mapper.readTree(MODELS.resolve("testdata/reference/stories260K__p1_once_upon.json").toFile());
        JunoCliTest.Run r = JunoCliTest.run("generate", "--model-path", STORIES, "--prompt", ref.get("prompt").asText(),
                "--max-tokens", "48", "--temperature", "0", "--ignore-eos", "--top-logits", "5", "--threads", "2", "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode out = mapper.readTree(r.out());
        assertEquals(ref.get("prompt_tokens"), out.get("prompt_tokens"));
        assertEquals(ref.get("generated_tokens"), out.get("tokens"));
        assertEquals(ref.get("generated_text").asText(), out.get("text").asText());
        JsonNode tops = out.get("top_logits");
        JsonNode refTops = ref.get("generated_top5_logits");
        assertEquals(48, tops.size());
        for (int i = 0; i < 48; i++) {
            assertEquals(5, tops.get(i).size());
            assertEquals(out.get("tokens").get(i).asInt(), tops.get(i).get(0).get(0).asInt(), "greedy token is the top logit");
            for (int j = 0; i < refTops.size() && j < 5; j++) { // the reference keeps the first few steps
                JsonNode mine = tops.get(i).get(j);
                JsonNode theirs = refTops.get(i).get(j);
                assertEquals(theirs.get(0).asInt(), mine.get(0).asInt(), "step " + i + " rank " + j);
                assertEquals(theirs.get(1).asDouble(), mine.get(1).asDouble(), 1e-3, "step " + i + " rank " + j);
            }
        }
        assertTrue(out.get("timings").get("prompt_ms").asDouble() > 0);
        assertTrue(out.get("timings").get("gen_ms").asDouble() > 0);
    }

    @Test
    void withoutJson_streamsTheTextToStdout_andSummarisesOnStderr() throws Exception {
        JsonNode ref = new ObjectMapper().readTree(MODELS.resolve("testdata/reference/stories260K__p1_once_upon.json").toFile());
        JunoCliTest.Run r = JunoCliTest.run("generate", "-m", STORIES, "--prompt", "Once upon a time", "-n", "48",
                "--temperature", "0", "--ignore-eos");
        assertEquals(0, r.code(), r.err());
        assertEquals(ref.get("generated_text").asText() + "\n", r.out());
        assertTrue(r.err().contains("generated 48 tokens"), r.err());
    }

    @Test
    void seededSampling_isReproducible_andTopLogitsAreOffByDefault() throws Exception {
        String[] args = {"generate", "-m", STORIES, "--prompt", "The little dog", "-n", "24", "--temperature", "0.9",
                "--seed", "7", "--json"};
        JunoCliTest.Run a = JunoCliTest.run(args);
        JunoCliTest.Run b = JunoCliTest.run(args);
        assertEquals(0, a.code(), a.err());
        ObjectMapper mapper = new ObjectMapper();
        JsonNode ja = mapper.readTree(a.out());
        assertEquals(ja.get("tokens"), mapper.readTree(b.out()).get("tokens"));
        assertTrue(ja.get("tokens").size() > 0);
        assertEquals(0, ja.get("top_logits").size());
    }

    @Test
    void promptLongerThanTheContext_isAOneLineErrorBeforeCompute() {
        JunoCliTest.Run r = JunoCliTest.run("generate", "-m", STORIES, "--prompt", "the dog ".repeat(1200), "--temperature", "0");
        assertEquals(1, r.code());
        assertEquals(1, r.err().strip().lines().count(), r.err());
        assertTrue(r.err().matches("juno: prompt of \\d+ tokens does not fit the context of 2048 tokens\\s*"), r.err());
        assertEquals("", r.out());
    }

    @Test
    void missingModel_isAOneLineError() {
        JunoCliTest.Run r = JunoCliTest.run("generate", "-m", "/nonexistent/model.gguf", "--prompt", "x");
        assertEquals(1, r.code());
        assertEquals("juno: model file not found: /nonexistent/model.gguf", r.err().strip());
    }

    @Test
    void badCacheTypeOrTokenCount_isAOneLineError() {
        JunoCliTest.Run bad = JunoCliTest.run("generate", "-m", STORIES, "--prompt", "x", "--cache-type", "q8_0");
        assertEquals(1, bad.code());
        assertEquals("juno: unknown --cache-type 'q8_0' (use f32 or f16)", bad.err().strip());
        JunoCliTest.Run zero = JunoCliTest.run("generate", "-m", STORIES, "--prompt", "x", "-n", "0");
        assertEquals(1, zero.code());
        assertEquals("juno: --max-tokens must be at least 1, got 0", zero.err().strip());
    }
}
