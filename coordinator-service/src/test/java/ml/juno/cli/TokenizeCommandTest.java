package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class TokenizeCommandTest {

    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", "../models"));

    static int[] ids(JsonNode tokens) {
        int[] out = new int[tokens.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = tokens.get(i).asInt();
        }
        return out;
    }

    @Test
    void json_matchesLlamaCppPromptIdsWithBos() throws Exception {
        JsonNode ref = new ObjectMapper().readTree(MODELS.resolve("testdata/reference/stories260K__p1_once_upon.json").toFile());
        JunoCliTest.Run r = JunoCliTest.run("tokenize", "--model-path", MODELS.resolve("stories260K.gguf").toString(),
                "--text", ref.get("prompt").asText(), "--json");
        assertEquals(0, r.code(), r.err());
        JsonNode out = new ObjectMapper().readTree(r.out());
        assertEquals(ref.get("prompt_tokens"), out.get("tokens"));
    }

    @Test
    void noBos_dropsTheLeadingBos() throws Exception {
        JunoCliTest.Run with = JunoCliTest.run("tokenize", "-m", MODELS.resolve("stories260K.gguf").toString(), "--text", "The little dog", "--json");
        JunoCliTest.Run without = JunoCliTest.run("tokenize", "-m", MODELS.resolve("stories260K.gguf").toString(), "--text", "The little dog", "--json", "--no-bos");
        int[] a = ids(new ObjectMapper().readTree(with.out()).get("tokens"));
        int[] b = ids(new ObjectMapper().readTree(without.out()).get("tokens"));
        assertEquals(a.length - 1, b.length);
        assertEquals(1, a[0]);
    }

    @Test
    void missingModelFile_isAOneLineError() {
        JunoCliTest.Run r = JunoCliTest.run("tokenize", "-m", "/nonexistent/model.gguf", "--text", "x");
        assertEquals(1, r.code());
        assertEquals("juno: model file not found: /nonexistent/model.gguf", r.err().strip());
    }

    @Test
    void notAGgufFile_isAOneLineErrorNamingTheProblem() {
        JunoCliTest.Run r = JunoCliTest.run("tokenize", "-m", MODELS.resolve("README.md").toString(), "--text", "x");
        assertEquals(1, r.code());
        assertTrue(r.err().startsWith("juno: "), r.err());
        assertEquals(1, r.err().strip().lines().count(), r.err());
    }

    @Test
    void textIsRequired() {
        JunoCliTest.Run r = JunoCliTest.run("tokenize", "-m", MODELS.resolve("stories260K.gguf").toString());
        assertEquals(2, r.code());
    }
}
