package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every architecture beyond llama through the HTTP API of a real {@code juno local} process, on its tiny random Q8_0
 * file: {@code /v1/tokenize} gives llama.cpp's prompt ids, a greedy {@code /v1/completions} produces llama.cpp's
 * generated tokens (those whose top-1/top-2 margin is safely above the numerical error, before any end-of-generation
 * token; compared as text through the server's own {@code /v1/detokenize}), and a chat request is answered through the
 * architecture's chat-template fallback.
 */
class ArchitecturesOverHttpIT {
    static final ObjectMapper JSON = new ObjectMapper();
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", "../models")).toAbsolutePath().normalize();
    /** Twice the tolerance on quantized files (2e-2): a margin above it cannot flip between two correct engines. */
    static final double BINDING_GAP = 0.04;
    final HttpClient http = HttpClient.newHttpClient();

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"qwen2", "qwen3", "qwen3moe", "phi3", "gemma3"})
    void architecture_servesTokenizeCompletionsAndChat(String arch) throws Exception {
        String id = "tiny-" + arch + "-random-Q8_0";
        Path model = MODELS.resolve("testdata/tiny-random/" + id + ".gguf");
        JsonNode ref = JSON.readTree(MODELS.resolve("testdata/reference/" + id + "__p1_once_upon.json").toFile());
        try (AppLauncher server = LocalServer.start(model, "-Xmx256m", "--threads", "1")) {
            JsonNode tok = post(server, "/v1/tokenize", JSON.createObjectNode().put("model", id).put("text", ref.get("prompt").asText())
                    .put("add_special", true).put("parse_special", false));
            assertEquals(ref.get("prompt_tokens").toString(), tok.get("tokens").toString(), arch + " prompt ids");

            int n = bindingTokens(ref);
            assertTrue(n >= 3, arch + ": too few binding tokens to check (" + n + ")");
            List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                expected.add(ref.get("generated_tokens").get(i).asInt());
            }
            var detok = JSON.createObjectNode().put("model", id);
            detok.putPOJO("tokens", expected);
            String expectedText = post(server, "/v1/detokenize", detok).get("text").asText();

            var req = JSON.createObjectNode().put("model", id).put("prompt", ref.get("prompt").asText()).put("max_tokens", n)
                    .put("temperature", 0);
            JsonNode done = post(server, "/v1/completions", req);
            JsonNode choice = done.get("choices").get(0);
            assertEquals(expectedText, choice.get("text").asText(), arch + ": the first " + n + " greedy tokens\n" + done);
            assertEquals("length", choice.get("finish_reason").asText(), arch + ": " + done);
            assertEquals(n, done.get("usage").get("completion_tokens").asInt(), arch + ": " + done);
            assertEquals(ref.get("prompt_tokens").size(), done.get("usage").get("prompt_tokens").asInt(), arch + ": " + done);

            var chat = JSON.createObjectNode().put("model", id).put("max_tokens", 6).put("temperature", 0);
            chat.putArray("messages").addObject().put("role", "user").put("content", "Tell me a story.");
            JsonNode answer = post(server, "/v1/chat/completions", chat);
            JsonNode message = answer.get("choices").get(0).get("message");
            assertEquals("assistant", message.get("role").asText(), arch + ": " + answer);
            assertTrue(answer.get("usage").get("prompt_tokens").asInt() > 5, arch + ": the chat template adds its markers: " + answer);
            assertFalse(answer.get("choices").get(0).get("finish_reason").asText().isEmpty(), arch + ": " + answer);
        }
    }

    /** Generated tokens before the first step whose top-1/top-2 gap is within {@link #BINDING_GAP} or that ends generation. */
    static int bindingTokens(JsonNode ref) {
        JsonNode gaps = ref.get("generated_top1_top2_gap");
        int n = 0;
        while (n < gaps.size() && gaps.get(n).asDouble() > BINDING_GAP) {
            n++;
        }
        for (JsonNode eog : ref.get("generated_eog_positions")) {
            n = Math.min(n, eog.asInt());
        }
        return n;
    }

    private JsonNode post(AppLauncher server, String path, JsonNode body) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(server.url(path)).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), path + " " + body + " -> " + r.body() + "\nserver log:\n" + server.log());
        return JSON.readTree(r.body());
    }
}
