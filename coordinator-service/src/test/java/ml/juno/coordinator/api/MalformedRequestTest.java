package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Client mistakes get the right 4xx in OpenAI's error envelope, naming the field at fault, and the server keeps
 * serving afterwards. One boot of the app on the bundled stories260K (context 512).
 */
@QuarkusTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MalformedRequestTest {

    static final String CHAT = "/v1/chat/completions";
    static final String TEXT = "/v1/completions";
    static final String M = "\"model\":\"stories260K\"";
    static final String MSGS = "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]";

    /**
     * One malformed request.
     *
     * @param param the {@code error.param} expected; null when the envelope need not name one
     */
    record Case(String name, String method, String path, String contentType, String body, int status, String param) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case chat(String name, String fields, int status, String param) {
        return new Case(name, "POST", CHAT, "application/json", "{" + fields + "}", status, param);
    }

    static Case chatWith(String name, String extra, int status, String param) {
        return chat(name, M + "," + MSGS + "," + extra, status, param);
    }

    static Case raw(String name, String path, String body, int status) {
        return new Case(name, "POST", path, "application/json", body, status, null);
    }

    static Case text(String name, String fields, int status, String param) {
        return new Case(name, "POST", TEXT, "application/json", "{" + fields + "}", status, param);
    }

    static Stream<Case> cases() {
        return Stream.of(
                raw("invalid JSON", CHAT, "{bad", 400),
                raw("truncated JSON", CHAT, "{" + M + ",\"messages\":[", 400),
                raw("empty body", CHAT, "", 400),
                raw("array instead of object", CHAT, "[]", 400),
                raw("string instead of object", CHAT, "\"hello\"", 400),
                raw("trailing garbage", CHAT, "{" + M + "," + MSGS + "} x", 400),
                chat("model empty", "\"model\":\"\"," + MSGS, 400, "model"),
                chat("model is a number", "\"model\":5," + MSGS, 400, "model"),
                chat("unknown model", "\"model\":\"gpt-9\"," + MSGS, 404, "model"),
                chat("messages missing", M, 400, "messages"),
                chat("messages empty", M + ",\"messages\":[]", 400, "messages"),
                chat("messages is a string", M + ",\"messages\":\"Hi\"", 400, "messages"),
                chat("message is null", M + ",\"messages\":[null]", 400, "messages[0]"),
                chat("role missing", M + ",\"messages\":[{\"content\":\"Hi\"}]", 400, "messages[0].role"),
                chat("role unknown", M + ",\"messages\":[{\"role\":\"bob\",\"content\":\"Hi\"}]", 400, "messages[0].role"),
                chat("content is a number", M + ",\"messages\":[{\"role\":\"user\",\"content\":5}]", 400, "messages[0].content"),
                chat("image content part", M + ",\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]}]",
                        400, "messages[0].content"),
                chatWith("max_tokens zero", "\"max_tokens\":0", 400, "max_tokens"),
                chatWith("max_tokens negative", "\"max_tokens\":-5", 400, "max_tokens"),
                chatWith("max_tokens is text", "\"max_tokens\":\"ten\"", 400, "max_tokens"),
                chatWith("max_tokens fractional", "\"max_tokens\":1.5", 400, "max_tokens"),
                chatWith("max_tokens beyond the context", "\"max_tokens\":1000000", 400, "max_tokens"),
                chatWith("max_tokens beyond int", "\"max_tokens\":99999999999", 400, "max_tokens"),
                chatWith("max_completion_tokens zero", "\"max_completion_tokens\":0", 400, "max_completion_tokens"),
                chatWith("temperature too high", "\"temperature\":3", 400, "temperature"),
                chatWith("temperature negative", "\"temperature\":-1", 400, "temperature"),
                chatWith("temperature is text", "\"temperature\":\"hot\"", 400, "temperature"),
                chatWith("top_p above one", "\"top_p\":1.5", 400, "top_p"),
                chatWith("n zero", "\"n\":0", 400, "n"),
                chatWith("n too many", "\"n\":100", 400, "n"),
                chatWith("five stop strings", "\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]", 400, "stop"),
                chatWith("stop is a number", "\"stop\":5", 400, "stop"),
                chatWith("empty stop string", "\"stop\":[\"\"]", 400, "stop[0]"),
                chatWith("presence_penalty too high", "\"presence_penalty\":3", 400, "presence_penalty"),
                chatWith("frequency_penalty too low", "\"frequency_penalty\":-3", 400, "frequency_penalty"),
                chatWith("logit_bias key not a token id", "\"logit_bias\":{\"abc\":1}", 400, "logit_bias"),
                chatWith("logit_bias value out of range", "\"logit_bias\":{\"5\":200}", 400, "logit_bias[5]"),
                chatWith("logit_bias token outside the vocabulary", "\"logit_bias\":{\"999999\":1}", 400, "logit_bias"),
                chatWith("top_logprobs without logprobs", "\"top_logprobs\":2", 400, "top_logprobs"),
                chatWith("top_logprobs too many", "\"logprobs\":true,\"top_logprobs\":25", 400, "top_logprobs"),
                chatWith("stream is text", "\"stream\":\"yes\"", 400, "stream"),
                chatWith("stream_options without stream", "\"stream_options\":{\"include_usage\":true}", 400, "stream_options"),
                chatWith("seed is text", "\"seed\":\"abc\"", 400, "seed"),
                chatWith("top_k negative", "\"top_k\":-1", 400, "top_k"),
                chatWith("min_p above one", "\"min_p\":2", 400, "min_p"),
                chatWith("repetition_penalty zero", "\"repetition_penalty\":0", 400, "repetition_penalty"),
                text("prompt missing", M, 400, "prompt"),
                text("prompt is a number", M + ",\"prompt\":5", 400, "prompt"),
                text("prompt token outside the vocabulary", M + ",\"prompt\":[1,999999]", 400, "prompt"),
                text("more prompts than one request takes", M + ",\"prompt\":[" + "\"a\",".repeat(64) + "\"b\"]", 400, "prompt"),
                text("prompt array of numbers and strings", M + ",\"prompt\":[\"a\",[1,2],5]", 400, "prompt"),
                text("prompt longer than the context", M + ",\"prompt\":\"" + "Once upon a time ".repeat(3000) + "\"", 400, "prompt"),
                text("suffix", M + ",\"prompt\":\"Hi\",\"suffix\":\"end\"", 400, "suffix"),
                text("best_of below n", M + ",\"prompt\":\"Hi\",\"n\":2,\"best_of\":1", 400, "best_of"),
                chatWith("unknown parameter", "\"frobnicate\":true", 400, "frobnicate"),
                chat("user message without content", M + ",\"messages\":[{\"role\":\"user\"}]", 400, "messages[0].content"),
                text("legacy logprobs too many", M + ",\"prompt\":\"Hi\",\"logprobs\":10", 400, "logprobs"),
                new Case("wrong content type", "POST", CHAT, "text/plain", "{" + M + "," + MSGS + "}", 415, null),
                new Case("GET on a POST route", "GET", CHAT, null, null, 405, null),
                new Case("unknown route", "GET", "/v1/nope", null, null, 404, null),
                new Case("unknown model by id", "GET", "/v1/models/gpt-9", null, null, 404, "model"),
                raw("tokenize without text", "/v1/tokenize", "{}", 400),
                new Case("detokenize an id outside the vocabulary", "POST", "/v1/detokenize", "application/json", "{\"tokens\":[1,999999]}", 400, "tokens"),
                new Case("detokenize text tokens", "POST", "/v1/detokenize", "application/json", "{\"tokens\":\"abc\"}", 400, "tokens"));
    }

    @BeforeEach
    void modelReady() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    @Order(1)
    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void malformedRequest_getsItsStatusInTheErrorEnvelope(Case c) {
        var spec = given();
        if (c.contentType() != null) {
            spec = spec.contentType(c.contentType());
        }
        if (c.body() != null) {
            spec = spec.body(c.body());
        }
        Response r = c.method().equals("GET") ? spec.get(c.path()) : spec.post(c.path());
        assertEquals(c.status(), r.statusCode(), c.name() + ": " + r.asString());
        assertTrue(r.contentType().startsWith("application/json"), c.name() + ": " + r.contentType());
        String type = r.path("error.type");
        String message = r.path("error.message");
        assertNotNull(type, r.asString());
        assertFalse(message == null || message.isBlank(), r.asString());
        if (c.param() != null) {
            assertEquals(c.param(), r.path("error.param"), c.name() + ": " + r.asString());
        }
    }

    @Order(2)
    @Test
    void tenMegabyteBody_isRefusedAsTooLongForTheContext() {
        String huge = "{" + M + ",\"messages\":[{\"role\":\"user\",\"content\":\"" + "a".repeat(10 * 1024 * 1024) + "\"}]}";
        long t0 = System.nanoTime();
        Response r = given().contentType("application/json").body(huge).post(CHAT);
        assertEquals(400, r.statusCode(), r.asString());
        assertEquals("messages", r.path("error.param"));
        assertTrue(System.nanoTime() - t0 < 20_000_000_000L, "refused without tokenizing 10 MB");
    }

    @Test
    void atLeastThirtyMalformedRequests_areCovered() {
        assertTrue(cases().count() >= 30);
        assertEquals(cases().count(), cases().map(Case::name).distinct().count(), "case names are unique");
    }

    @Order(3)
    @Test
    void afterAllThat_theServerStillServes() {
        Response r = given().contentType("application/json")
                .body("{" + M + "," + MSGS + ",\"max_tokens\":4,\"temperature\":0}").post(CHAT);
        assertEquals(200, r.statusCode(), r.asString());
        assertEquals("chat.completion", r.path("object"));
        List<?> choices = r.path("choices");
        assertEquals(1, choices.size());
    }
}
