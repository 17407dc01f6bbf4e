package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The API on the bundled stories260K, as an HTTP client sees it (same boot as {@link MalformedRequestTest}). */
@QuarkusTest
class ApiBehaviourTest {

    static final String CHAT = "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":8,\"temperature\":0";

    @BeforeEach
    void ready() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    @Test
    void chatCompletionStream_isFramedByteForByteAsOpenAi() {
        Response r = given().contentType("application/json").accept("application/json").body(CHAT + ",\"stream\":true}").post("/v1/chat/completions");
        assertEquals(200, r.statusCode());
        assertTrue(r.contentType().startsWith("text/event-stream"), r.contentType());
        String body = r.asString();
        assertTrue(body.startsWith("data: {\"id\":\"chatcmpl-"), body);
        assertTrue(body.endsWith("}\n\ndata: [DONE]\n\n"), body);
        assertFalse(body.contains("data:{"), "a space after data:");
        for (String frame : body.split("\n\n")) {
            assertTrue(frame.startsWith("data: ") && !frame.contains("\n"), "one data line per event: " + frame);
        }
    }

    @Test
    void chatLogprobs_oneEntryPerTokenWithTheAskedAlternatives() {
        Response r = given().contentType("application/json").body(CHAT + ",\"logprobs\":true,\"top_logprobs\":3}").post("/v1/chat/completions");
        assertEquals(200, r.statusCode(), r.asString());
        List<Map<String, Object>> content = r.path("choices[0].logprobs.content");
        int tokens = r.path("usage.completion_tokens");
        assertTrue(content.size() >= tokens - 1 && content.size() <= tokens, content.size() + " entries for " + tokens + " tokens");
        for (Map<String, Object> e : content) {
            assertTrue(((Number) e.get("logprob")).doubleValue() <= 0);
            assertEquals(3, ((List<?>) e.get("top_logprobs")).size());
        }
    }

    @Test
    void tokenizeThenDetokenize_roundTrips() {
        List<Integer> tokens = given().contentType("application/json").body("{\"text\":\"Once upon a time\"}").post("/v1/tokenize")
                .then().statusCode(200).extract().path("tokens");
        assertFalse(tokens.isEmpty());
        String text = given().contentType("application/json").body(Map.of("tokens", tokens)).post("/v1/detokenize")
                .then().statusCode(200).extract().path("text");
        assertEquals("Once upon a time", text);
        List<Integer> withBos = given().contentType("application/json").body("{\"text\":\"Once upon a time\",\"add_special\":true}")
                .post("/v1/tokenize").then().statusCode(200).extract().path("tokens");
        assertEquals(tokens.size() + 1, withBos.size(), "add_special adds BOS");
    }

    @Test
    void metrics_exposeRequestTokenLatencyAndEngineGauges() {
        given().contentType("application/json").body(CHAT + "}").post("/v1/chat/completions").then().statusCode(200);
        String metrics = given().get("/q/metrics").then().statusCode(200).extract().asString();
        for (String name : List.of("juno_requests_total{endpoint=\"chat\"}", "juno_requests_finished_total", "juno_tokens_prompt_total",
                "juno_tokens_generated_total", "juno_time_to_first_token_seconds_count", "juno_inter_token_latency_seconds_count",
                "juno_queue_depth", "juno_batch_size", "juno_kv_blocks_used", "juno_prefix_cache_hit_rate", "juno_model_ready 1.0",
                "juno_experts_healthy 1.0", "juno_experts_hits_total")) {
            assertTrue(metrics.contains(name), "missing " + name);
        }
    }

    @Test
    void openApi_andHealth_andConsole_areServed() {
        String openapi = given().get("/q/openapi").then().statusCode(200).extract().asString();
        assertTrue(openapi.contains("/v1/chat/completions") && openapi.contains("/v1/tokenize"), openapi.substring(0, 200));
        // every schema has a name of its own, not a numbered copy of another's (Choice1, Response1, …)
        java.util.regex.Matcher numbered = java.util.regex.Pattern.compile("(?m)^    ([A-Za-z]+[0-9]+):").matcher(openapi);
        assertFalse(numbered.find(), () -> "a numbered schema name: " + numbered.group(1));
        assertTrue(openapi.contains("ChatCompletionChoice:") && openapi.contains("ChatCompletionChunkChoice:"), "named choices");
        given().get("/q/health/ready").then().statusCode(200);
        String page = given().get("/").then().statusCode(200).extract().asString();
        assertTrue(page.contains("console.js"), page);
        String dashboard = given().get("/health-ui").then().statusCode(200).extract().asString();
        assertTrue(dashboard.contains("health-ui.js"), dashboard);
        for (String asset : List.of("/", "/console.js", "/console.css", "/health-ui/", "/health-ui/health-ui.js")) {
            String text = given().get(asset).then().statusCode(200).extract().asString();
            assertFalse(text.contains("http://") || text.contains("https://") || text.contains("//cdn"), asset + " loads nothing from the network");
        }
        // every file the console's page names (its icons, the markdown and sanitizer webjars at the pinned versions) is
        // served, and /favicon.ico is an icon
        Matcher named = Pattern.compile("(?:src|href)=\"([^\"]+)\"").matcher(page);
        int count = 0;
        while (named.find()) {
            given().get("/" + named.group(1)).then().statusCode(200);
            count++;
        }
        assertTrue(page.contains("webjars/marked/") && page.contains("webjars/dompurify/") && count >= 6, page);
        assertTrue(given().get("/favicon.ico").then().statusCode(200).extract().contentType().startsWith("image/"));
    }

    @Test
    void aRequestWithoutModel_getsTheServedModel_asTheOldApiDid() {
        String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":4,\"temperature\":0}";
        Response chat = given().contentType("application/json").body(body).post("/v1/chat/completions");
        assertEquals(200, chat.statusCode(), chat.asString());
        assertEquals("stories260K", chat.path("model"));
        Response text = given().contentType("application/json").body("{\"prompt\":\"Once upon a time\",\"max_tokens\":4}").post("/v1/completions");
        assertEquals(200, text.statusCode(), text.asString());
        assertEquals("stories260K", text.path("model"));
    }

    @Test
    void junoPrefixedFields_areHonoured_andEveryReplySaysItsLatency() {
        Response greedy = given().contentType("application/json").body(CHAT + "}").post("/v1/chat/completions");
        assertEquals(200, greedy.statusCode(), greedy.asString());
        assertTrue(Long.parseLong(greedy.header("X-Juno-Latency-Ms")) >= 0, "X-Juno-Latency-Ms: " + greedy.header("X-Juno-Latency-Ms"));
        String expected = greedy.path("choices[0].message.content");
        // at temperature 1.5 only x_juno_top_k 1 makes every draw the most likely token
        for (long seed = 1; seed <= 3; seed++) {
            String hot = CHAT.replace("\"temperature\":0", "\"temperature\":1.5,\"seed\":" + seed) + ",\"x_juno_top_k\":1,\"x_juno_priority\":5}";
            Response r = given().contentType("application/json").body(hot).post("/v1/chat/completions");
            assertEquals(200, r.statusCode(), r.asString());
            assertEquals(expected, r.path("choices[0].message.content"), "x_juno_top_k 1 is greedy at any temperature");
        }
        Response stream = given().contentType("application/json").body(CHAT + ",\"stream\":true}").post("/v1/chat/completions");
        assertTrue(Long.parseLong(stream.header("X-Juno-Latency-Ms")) >= 0, "streams say it too");
    }
}
