package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 23's completions and stream-shape bullets on the bundled stories260K (same boot as {@link MalformedRequestTest}):
 * echo with the prompt's log-probabilities, prompt arrays, best_of, refused parameters, {@code "usage": null} on
 * every chunk but the last, logprobs that match the content a stop string cut, and OpenAI's error shape for unknown
 * routes and wrong methods.
 */
@QuarkusTest
class OpenAiSurfaceTest {

    static final String TEXT = "/v1/completions";
    static final String CHAT = "/v1/chat/completions";
    static final ObjectMapper JSON = new ObjectMapper();

    @BeforeEach
    void ready() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    static JsonNode post(String path, String body, int status) {
        Response r = given().contentType("application/json").body(body).post(path);
        assertEquals(status, r.statusCode(), r.asString());
        try {
            return JSON.readTree(r.asString());
        } catch (Exception e) {
            throw new AssertionError(r.asString(), e);
        }
    }

    static JsonNode ok(String path, String body) {
        return post(path, body, 200);
    }

    /** The JSON chunks of a stream, without {@code [DONE]} (which must end it). */
    static List<JsonNode> chunks(String path, String body) throws Exception {
        Response r = given().contentType("application/json").body(body).post(path);
        assertEquals(200, r.statusCode(), r.asString());
        String s = r.asString();
        assertTrue(s.endsWith("data: [DONE]\n\n"), s);
        List<JsonNode> out = new ArrayList<>();
        for (String frame : s.split("\n\n")) {
            String data = frame.substring("data: ".length());
            if (!data.equals("[DONE]")) {
                out.add(JSON.readTree(data));
            }
        }
        return out;
    }

    static List<Integer> tokenize(String text) {
        return given().contentType("application/json").body("{\"text\":" + quote(text) + ",\"add_special\":true}").post("/v1/tokenize")
                .then().statusCode(200).extract().path("tokens");
    }

    static String quote(String s) {
        try {
            return JSON.writeValueAsString(s);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    // ---- echo ----

    @Test
    void echo_prependsThePromptText() {
        JsonNode plain = ok(TEXT, "{\"prompt\":\"Once upon a time\",\"max_tokens\":6,\"temperature\":0}");
        JsonNode echoed = ok(TEXT, "{\"prompt\":\"Once upon a time\",\"max_tokens\":6,\"temperature\":0,\"echo\":true}");
        assertEquals("Once upon a time" + plain.at("/choices/0/text").asText(), echoed.at("/choices/0/text").asText());
        assertEquals(plain.at("/usage").toString(), echoed.at("/usage").toString(), "echo changes no usage");
    }

    @Test
    void echoWithLogprobs_scoresEveryPromptTokenAsTheModelWouldGenerateIt() {
        // greedy continuation of the prompt, with the chosen token's log-probability
        JsonNode first = ok(TEXT, "{\"prompt\":\"Once upon a time\",\"max_tokens\":3,\"temperature\":0,\"logprobs\":2}");
        List<Integer> prompt = tokenize("Once upon a time");
        String next = first.at("/choices/0/logprobs/tokens/0").asText();
        double nextLp = first.at("/choices/0/logprobs/token_logprobs/0").asDouble();
        // the prompt plus that token, echoed: its last entry scores exactly that token given the prompt
        List<Integer> ids = given().contentType("application/json").body("{\"text\":\"Once upon a time\",\"add_special\":true}")
                .post("/v1/tokenize").then().extract().path("tokens");
        JsonNode again = ok(TEXT, "{\"prompt\":\"Once upon a time" + "\",\"max_tokens\":1,\"temperature\":0,\"logprobs\":2,\"echo\":true}");
        JsonNode lp = again.at("/choices/0/logprobs");
        int promptShown = prompt.size() - 1; // the BOS is not listed
        assertEquals(promptShown + 1, lp.get("tokens").size(), lp.toString());
        assertEquals(lp.get("tokens").size(), lp.get("token_logprobs").size());
        assertEquals(lp.get("tokens").size(), lp.get("text_offset").size());
        for (int i = 0; i < promptShown; i++) {
            double v = lp.get("token_logprobs").get(i).asDouble();
            assertTrue(lp.get("token_logprobs").get(i).isNumber() && v <= 0, "prompt token " + i + ": " + lp);
            assertEquals(2, lp.get("top_logprobs").get(i).size(), lp.toString());
        }
        // and the greedy token after the prompt agrees with the first request's
        assertEquals(next, lp.get("tokens").get(promptShown).asText());
        assertEquals(nextLp, lp.get("token_logprobs").get(promptShown).asDouble(), 1e-4);

        // scoring the prompt + that token: its last prompt entry is the same log-probability, computed as a prompt row
        List<Integer> longer = new ArrayList<>(ids);
        longer.add(first.at("/choices/0/logprobs/tokens").size() > 0 ? tokenIdOf(next, ids) : -1);
        JsonNode scored = ok(TEXT, "{\"prompt\":" + longer + ",\"max_tokens\":1,\"temperature\":0,\"logprobs\":0,\"echo\":true}");
        JsonNode slp = scored.at("/choices/0/logprobs/token_logprobs");
        assertEquals(nextLp, slp.get(longer.size() - 2).asDouble(), 1e-3, scored.toString());
        // the same prompt tokens score the same whether the prompt is text or ids, with or without the extra token
        for (int i = 0; i < promptShown; i++) {
            assertEquals(lp.get("token_logprobs").get(i).asDouble(), slp.get(i).asDouble(), 1e-3, "token " + i);
        }
    }

    /** The id of the one-token {@code piece} that follows {@code prefix} (the id the server reported as text). */
    private static int tokenIdOf(String piece, List<Integer> prefix) {
        for (int id = 511; id >= 0; id--) { // from the top: the byte-fallback tokens with the same text come first
            String text = given().contentType("application/json").body("{\"tokens\":[" + id + "]}").post("/v1/detokenize")
                    .then().extract().path("text");
            if (piece.equals(text) || piece.equals(" " + text) || piece.strip().equals(text.strip()) && !text.isBlank()) {
                return id;
            }
        }
        throw new AssertionError("no token " + piece);
    }

    @Test
    void echoWithTokenIds_withoutBos_hasANullFirstLogprob() {
        List<Integer> ids = tokenize("Once upon a time");
        List<Integer> noBos = ids.subList(1, ids.size());
        JsonNode r = ok(TEXT, "{\"prompt\":" + noBos + ",\"max_tokens\":2,\"temperature\":0,\"logprobs\":1,\"echo\":true}");
        JsonNode lp = r.at("/choices/0/logprobs");
        assertTrue(lp.get("token_logprobs").get(0).isNull(), lp.toString());
        assertTrue(lp.get("top_logprobs").get(0).isNull(), lp.toString());
        assertTrue(lp.get("token_logprobs").get(1).isNumber(), lp.toString());
        assertTrue(r.at("/choices/0/text").asText().startsWith("Once upon a time"), r.toString());
    }

    @Test
    void echoStreamed_sendsThePromptFirst_withItsLogprobs() throws Exception {
        List<JsonNode> plain = chunks(TEXT, "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0,\"stream\":true,\"echo\":true}");
        assertEquals("Once upon a time", plain.getFirst().at("/choices/0/text").asText());
        List<JsonNode> lp = chunks(TEXT, "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0,\"stream\":true,\"echo\":true,\"logprobs\":0}");
        JsonNode first = lp.getFirst().at("/choices/0");
        assertEquals("Once upon a time", first.get("text").asText());
        assertEquals(tokenize("Once upon a time").size() - 1, first.at("/logprobs/tokens").size(), first.toString());
        StringBuilder all = new StringBuilder();
        StringBuilder blocking = new StringBuilder(ok(TEXT, "{\"prompt\":\"Once upon a time\",\"max_tokens\":4,\"temperature\":0,\"echo\":true}")
                .at("/choices/0/text").asText());
        for (JsonNode c : lp) {
            all.append(c.at("/choices/0/text").asText());
        }
        assertEquals(blocking.toString(), all.toString());
    }

    // ---- prompt arrays ----

    @Test
    void promptArray_eachPromptItsChoices_indexedPromptTimesNPlusI() {
        String a = ok(TEXT, "{\"prompt\":\"Once upon a time\",\"max_tokens\":5,\"temperature\":0}").at("/choices/0/text").asText();
        JsonNode one = ok(TEXT, "{\"prompt\":\"The little dog\",\"max_tokens\":5,\"temperature\":0}");
        String b = one.at("/choices/0/text").asText();
        JsonNode both = ok(TEXT, "{\"prompt\":[\"Once upon a time\",\"The little dog\"],\"max_tokens\":5,\"temperature\":0,\"n\":2}");
        JsonNode choices = both.get("choices");
        assertEquals(4, choices.size(), both.toString());
        for (int i = 0; i < 4; i++) {
            assertEquals(i, choices.get(i).get("index").asInt());
            assertEquals(i < 2 ? a : b, choices.get(i).get("text").asText(), "choice " + i);
        }
        int promptTokens = tokenize("Once upon a time").size() + tokenize("The little dog").size();
        assertEquals(promptTokens, both.at("/usage/prompt_tokens").asInt(), "every prompt counted once");
        // token-id arrays too, the same answers
        JsonNode ids = ok(TEXT, "{\"prompt\":[" + tokenize("Once upon a time") + "," + tokenize("The little dog")
                + "],\"max_tokens\":5,\"temperature\":0}");
        assertEquals(a, ids.at("/choices/0/text").asText());
        assertEquals(b, ids.at("/choices/1/text").asText());
        assertEquals(1, ids.at("/choices/1/index").asInt());
    }

    @Test
    void promptArrayStreamed_choicesCarryTheirIndexes() throws Exception {
        List<JsonNode> chunks = chunks(TEXT, "{\"prompt\":[\"Once upon a time\",\"The little dog\",\"A cat\"],\"max_tokens\":4,"
                + "\"temperature\":0,\"stream\":true}");
        StringBuilder[] texts = {new StringBuilder(), new StringBuilder(), new StringBuilder()};
        int finishes = 0;
        for (JsonNode c : chunks) {
            JsonNode choice = c.at("/choices/0");
            texts[choice.get("index").asInt()].append(choice.get("text").asText());
            finishes += choice.get("finish_reason").isNull() ? 0 : 1;
        }
        assertEquals(3, finishes);
        JsonNode whole = ok(TEXT, "{\"prompt\":[\"Once upon a time\",\"The little dog\",\"A cat\"],\"max_tokens\":4,\"temperature\":0}");
        for (int i = 0; i < 3; i++) {
            assertEquals(whole.at("/choices/" + i + "/text").asText(), texts[i].toString());
        }
    }

    // ---- best_of ----

    @Test
    void bestOf_returnsTheNWithTheHighestMeanLogprob() {
        String common = "\"prompt\":\"Once upon a time\",\"max_tokens\":8,\"temperature\":1.5,\"seed\":7";
        JsonNode three = ok(TEXT, "{" + common + ",\"n\":3,\"logprobs\":0}");
        int best = -1;
        double bestMean = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < 3; i++) {
            JsonNode lps = three.at("/choices/" + i + "/logprobs/token_logprobs");
            double sum = 0;
            for (JsonNode v : lps) {
                sum += v.asDouble();
            }
            double mean = sum / lps.size();
            if (mean > bestMean) {
                bestMean = mean;
                best = i;
            }
        }
        JsonNode one = ok(TEXT, "{" + common + ",\"best_of\":3}");
        assertEquals(1, one.get("choices").size());
        assertEquals(three.at("/choices/" + best + "/text").asText(), one.at("/choices/0/text").asText());
        assertTrue(one.at("/choices/0/logprobs").isNull(), "no logprobs unless asked");
        assertEquals(three.at("/usage/completion_tokens").asInt(), one.at("/usage/completion_tokens").asInt(),
                "the usage counts all best_of choices");
    }

    @Test
    void bestOf_belowNOrStreamed_isRefused() {
        assertEquals("best_of", post(TEXT, "{\"prompt\":\"Hi\",\"n\":3,\"best_of\":2}", 400).at("/error/param").asText());
        assertEquals("best_of", post(TEXT, "{\"prompt\":\"Hi\",\"best_of\":2,\"stream\":true}", 400).at("/error/param").asText());
        ok(TEXT, "{\"prompt\":\"Hi\",\"best_of\":1,\"max_tokens\":2}");
        JsonNode tooMany = post(TEXT, "{\"prompt\":[\"a\",\"b\",\"c\",\"d\",\"e\"],\"best_of\":16}", 400);
        assertEquals("best_of", tooMany.at("/error/param").asText(), "5 prompts x 16 is more than one request may start");
    }

    // ---- refused parameters ----

    @Test
    void unimplementedOrUnknownParameters_areRefusedByName() {
        JsonNode suffix = post(TEXT, "{\"prompt\":\"Hi\",\"suffix\":\"the end\"}", 400);
        assertEquals("suffix", suffix.at("/error/param").asText());
        assertEquals("unsupported_parameter", suffix.at("/error/code").asText());
        assertTrue(suffix.at("/error/message").asText().contains("suffix"), suffix.toString());
        ok(TEXT, "{\"prompt\":\"Hi\",\"suffix\":\"\",\"max_tokens\":2}");
        String msgs = "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":2";
        for (String p : List.of("\"audio\":{\"voice\":\"alloy\",\"format\":\"mp3\"}", "\"modalities\":[\"text\",\"audio\"]",
                "\"prediction\":{\"type\":\"content\",\"content\":\"x\"}", "\"reasoning_effort\":\"low\"", "\"store\":\"yes\"",
                "\"service_tier\":\"flex\"", "\"web_search_options\":{}", "\"functions\":[]", "\"verbosity\":\"low\"")) {
            JsonNode e = post(CHAT, "{" + msgs + "," + p + "}", 400);
            String name = p.substring(1, p.indexOf('"', 1));
            assertEquals(name, e.at("/error/param").asText(), e.toString());
            assertEquals("invalid_request_error", e.at("/error/type").asText());
        }
        for (String p : List.of("\"store\":false", "\"modalities\":[\"text\"]", "\"service_tier\":\"auto\"", "\"audio\":null",
                "\"prompt_cache_key\":\"k\"", "\"safety_identifier\":\"u1\"")) {
            ok(CHAT, "{" + msgs + "," + p + "}");
        }
        JsonNode unknown = post(CHAT, "{" + msgs + ",\"temprature\":0.5}", 400);
        assertEquals("temprature", unknown.at("/error/param").asText());
        assertEquals("Unrecognized request argument supplied: temprature", unknown.at("/error/message").asText());
        assertEquals("unknown_parameter", post(TEXT, "{\"prompt\":\"Hi\",\"foo\":1}", 400).at("/error/code").asText());
        ok(TEXT, "{\"prompt\":\"Hi\",\"foo\":null,\"max_tokens\":2}");
    }

    // ---- stream shape ----

    @Test
    void includeUsage_everyChunkButTheLastHasUsageNull_chatAndCompletions() throws Exception {
        for (String[] c : new String[][] {
                {CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":6,\"n\":2,\"logprobs\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"},
                {TEXT, "{\"prompt\":\"Once\",\"max_tokens\":6,\"n\":2,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"},
                {TEXT, "{\"prompt\":\"Once\",\"max_tokens\":6,\"logprobs\":1,\"echo\":true,\"stream\":true,\"stream_options\":{\"include_usage\":true}}"}}) {
            List<JsonNode> chunks = chunks(c[0], c[1]);
            assertTrue(chunks.size() > 3, chunks.toString());
            for (JsonNode chunk : chunks.subList(0, chunks.size() - 1)) {
                assertTrue(chunk.has("usage") && chunk.get("usage").isNull(), c[0] + ": " + chunk);
                assertEquals(1, chunk.get("choices").size(), chunk.toString());
            }
            JsonNode last = chunks.getLast();
            assertEquals(0, last.get("choices").size(), last.toString());
            assertTrue(last.at("/usage/total_tokens").asInt() > 0, last.toString());
        }
        // without include_usage no chunk has a usage key
        for (JsonNode chunk : chunks(TEXT, "{\"prompt\":\"Once\",\"max_tokens\":4,\"stream\":true}")) {
            assertFalse(chunk.has("usage"), chunk.toString());
        }
    }

    /** The text of a choice's logprob entries, token by token (chat: from their bytes, exactly). */
    static List<String> chatTokens(JsonNode content) {
        List<String> out = new ArrayList<>();
        for (JsonNode e : content) {
            byte[] b = new byte[e.get("bytes").size()];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) e.get("bytes").get(i).asInt();
            }
            out.add(new String(b, java.nio.charset.StandardCharsets.UTF_8));
        }
        return out;
    }

    /** Every listed token shows in {@code content}: the tokens' text starts with the content, the last one reaching past its end at most. */
    static void assertMatches(String content, List<String> tokens, String what) {
        String joined = String.join("", tokens);
        String allButLast = String.join("", tokens.subList(0, Math.max(0, tokens.size() - 1)));
        assertTrue(joined.startsWith(content) || content.startsWith(joined.stripLeading()) || joined.stripLeading().startsWith(content.stripLeading()),
                what + ": tokens " + tokens + " vs content '" + content + "'");
        assertTrue(allButLast.stripLeading().length() < content.stripLeading().length() || tokens.isEmpty(),
                what + ": a token wholly inside the stop string is listed: " + tokens + " vs '" + content + "'");
    }

    @Test
    void logprobsWithAStopString_matchTheContent_atATokenBoundaryAndMidToken() throws Exception {
        String base = "\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":24,\"temperature\":0,\"logprobs\":true";
        JsonNode free = ok(CHAT, "{" + base + "}");
        String text = free.at("/choices/0/message/content").asText();
        List<String> tokens = chatTokens(free.at("/choices/0/logprobs/content"));
        assertTrue(tokens.size() >= 8 && String.join("", tokens).contains(text.strip().substring(0, 4)), tokens + " / " + text);
        // a stop string starting where token 4 starts (a boundary) and one starting inside a token of 3+ chars
        int boundary = String.join("", tokens.subList(0, 4)).length();
        int mid = -1;
        int at = 0;
        for (int i = 0; i < tokens.size() && mid < 0; i++) {
            if (i >= 2 && tokens.get(i).strip().length() >= 3) {
                mid = at + tokens.get(i).length() - 2;
            }
            at += tokens.get(i).length();
        }
        String joined = String.join("", tokens);
        for (int cut : new int[] {boundary, mid}) {
            if (cut <= 0) {
                continue;
            }
            String stop = joined.substring(cut, Math.min(joined.length(), cut + 3));
            String expected = joined.substring(0, joined.indexOf(stop));
            JsonNode r = ok(CHAT, "{" + base + ",\"stop\":[" + quote(stop) + "]}");
            String content = r.at("/choices/0/message/content").asText();
            assertEquals("stop", r.at("/choices/0/finish_reason").asText());
            assertEquals(expected.strip(), content.strip(), "stop " + quote(stop));
            List<String> lp = chatTokens(r.at("/choices/0/logprobs/content"));
            assertMatches(content, lp, "chat, stop " + quote(stop));
            // streamed: the same entries
            List<String> streamed = new ArrayList<>();
            StringBuilder streamedText = new StringBuilder();
            for (JsonNode c : chunks(CHAT, "{" + base + ",\"stop\":[" + quote(stop) + "],\"stream\":true}")) {
                JsonNode ch = c.at("/choices/0");
                streamedText.append(ch.at("/delta/content").asText(""));
                if (ch.at("/logprobs/content").isArray()) {
                    streamed.addAll(chatTokens(ch.at("/logprobs/content")));
                }
            }
            assertEquals(content, streamedText.toString());
            assertEquals(lp, streamed, "streamed logprobs, stop " + quote(stop));
            // legacy completions with logprobs: the same rule
            JsonNode t = ok(TEXT, "{\"prompt\":\"Once upon a time\",\"max_tokens\":24,\"temperature\":0,\"logprobs\":0,\"stop\":[" + quote(stop) + "]}");
            List<String> pieces = new ArrayList<>();
            t.at("/choices/0/logprobs/tokens").forEach(x -> pieces.add(x.asText()));
            if (t.at("/choices/0/finish_reason").asText().equals("stop")) {
                assertMatches(t.at("/choices/0/text").asText(), pieces, "completions, stop " + quote(stop));
            }
        }
    }

    // ---- validation and routes ----

    @Test
    void userOrSystemMessageWithoutContent_isRefused() {
        JsonNode e = post(CHAT, "{\"messages\":[{\"role\":\"user\"}]}", 400);
        assertEquals("messages[0].content", e.at("/error/param").asText());
        JsonNode s = post(CHAT, "{\"messages\":[{\"role\":\"system\",\"content\":null},{\"role\":\"user\",\"content\":\"Hi\"}]}", 400);
        assertEquals("messages[0].content", s.at("/error/param").asText());
    }

    @Test
    void unknownRoutesAndWrongMethods_answerInOpenAisErrorShape() {
        for (String path : List.of("/v1/nope", "/nope", "/v1/chat/completion", "/v2/completions")) {
            Response r = given().contentType("application/json").body("{}").post(path);
            assertEquals(404, r.statusCode(), path + ": " + r.asString());
            assertTrue(r.contentType().startsWith("application/json"), path + ": " + r.contentType());
            assertEquals("Invalid URL (POST " + path + ")", r.path("error.message"), r.asString());
            assertEquals("invalid_request_error", r.path("error.type"));
            assertTrue(r.asString().contains("\"param\":null") && r.asString().contains("\"code\""), r.asString());
        }
        Response get = given().get("/v1/completions");
        assertEquals(405, get.statusCode(), get.asString());
        assertEquals("invalid_request_error", get.path("error.type"), get.asString());
        assertTrue(get.<String>path("error.message").contains("GET"), get.asString());
        assertNull(given().get("/v1/models").path("error"), "real routes still work");
    }

    // ---- API docs ----

    @Test
    void openApiDocument_listsEveryRequestField_andSwaggerUiServesIt() throws Exception {
        JsonNode doc = JSON.readTree(given().accept("application/json").get("/q/openapi?format=json").then().statusCode(200)
                .extract().asString());
        JsonNode schemas = doc.at("/components/schemas");
        for (String[] s : new String[][] {
                {"ChatCompletionRequest", "messages", "model", "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop",
                        "seed", "n", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "stream",
                        "stream_options", "user", "top_k", "min_p", "repetition_penalty", "priority"},
                {"CompletionRequest", "prompt", "model", "max_tokens", "temperature", "top_p", "stop", "seed", "n", "logprobs",
                        "echo", "best_of", "stream", "stream_options", "logit_bias", "user"},
                {"TextCompletion", "id", "object", "created", "model", "choices", "usage"},
                {"ChatCompletion", "id", "choices", "usage"},
                {"ErrorResponse", "error"}}) {
            JsonNode props = schemas.at("/" + s[0] + "/properties");
            assertTrue(props.isObject(), s[0] + " in " + schemas.fieldNames());
            for (int i = 1; i < s.length; i++) {
                assertTrue(props.has(s[i]), s[0] + "." + s[i] + " missing: " + props);
                if (s[0].endsWith("Request")) {
                    assertFalse(props.get(s[i]).path("description").asText().isBlank(), s[0] + "." + s[i] + " has no description");
                }
            }
        }
        assertTrue(doc.at("/paths/~1v1~1completions/post").isObject(), "the completions route is documented");
        JsonNode prompt = schemas.at("/CompletionRequest/properties/prompt");
        JsonNode shape = prompt.has("$ref") ? schemas.get(prompt.get("$ref").asText().replace("#/components/schemas/", "")) : prompt;
        assertEquals(4, shape.path("oneOf").size(), "prompt's four shapes: " + prompt + " " + shape);
        assertFalse(shape.has("items") || prompt.has("items"), "prompt is no list of an internal type: " + prompt + " " + shape);
        Response ui = given().get("/q/swagger-ui/");
        assertEquals(200, ui.statusCode());
        assertTrue(ui.asString().contains("swagger-ui"), ui.asString());
    }
}
