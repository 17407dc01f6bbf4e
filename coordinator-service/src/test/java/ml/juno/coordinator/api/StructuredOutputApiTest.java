package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.grammar.Grammar;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code response_format} and {@code grammar} on the bundled stories260K, a model that never writes JSON by itself:
 * what comes back parses and fits the schema because decoding was constrained.
 */
@QuarkusTest
class StructuredOutputApiTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    static final String SCHEMA = "{\"type\":\"object\",\"additionalProperties\":false,\"required\":[\"name\",\"age\",\"mood\"],"
            + "\"properties\":{\"name\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":10},\"age\":{\"type\":\"integer\"},"
            + "\"mood\":{\"enum\":[\"happy\",\"sad\"]},\"pets\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"maxLength\":6},\"maxItems\":2}}}";

    @BeforeEach
    void ready() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    private static String chat(String extra) {
        return "{\"messages\":[{\"role\":\"user\",\"content\":\"Tell me about a girl.\"}],\"max_tokens\":200" + extra + "}";
    }

    private static void assertFits(JsonNode doc, String text) {
        assertTrue(doc.isObject(), text);
        assertTrue(doc.get("name").isTextual() && !doc.get("name").textValue().isEmpty() && doc.get("name").textValue().length() <= 10, text);
        assertTrue(doc.get("age").isIntegralNumber(), text);
        assertTrue(List.of("happy", "sad").contains(doc.get("mood").textValue()), text);
        doc.fieldNames().forEachRemaining(f -> assertTrue(List.of("name", "age", "mood", "pets").contains(f), text));
    }

    @Test
    void jsonSchema_everyChoiceParsesAndFits() throws Exception {
        Response r = given().contentType("application/json").body(chat(",\"n\":3,\"seed\":11,\"temperature\":1.2,"
                + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"girl\",\"strict\":true,\"schema\":" + SCHEMA + "}}"))
                .post("/v1/chat/completions");
        assertEquals(200, r.statusCode(), r.asString());
        List<Map<String, Object>> choices = r.path("choices");
        assertEquals(3, choices.size());
        for (int i = 0; i < 3; i++) {
            String content = r.path("choices[" + i + "].message.content");
            assertEquals("stop", r.path("choices[" + i + "].finish_reason"), content);
            assertFits(JSON.readTree(content), content);
        }
    }

    @Test
    void jsonSchema_sameSeedSameDocument() {
        String body = chat(",\"seed\":77,\"temperature\":1,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":"
                + "{\"name\":\"girl\",\"schema\":" + SCHEMA + "}}");
        String a = given().contentType("application/json").body(body).post("/v1/chat/completions").then().statusCode(200)
                .extract().path("choices[0].message.content");
        String b = given().contentType("application/json").body(body).post("/v1/chat/completions").then().statusCode(200)
                .extract().path("choices[0].message.content");
        assertEquals(a, b);
    }

    @Test
    void jsonSchema_streamedDeltasJoinToAFittingDocument() throws Exception {
        String body = given().contentType("application/json").body(chat(",\"stream\":true,\"seed\":5,"
                + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"girl\",\"schema\":" + SCHEMA + "}}"))
                .post("/v1/chat/completions").then().statusCode(200).extract().asString();
        StringBuilder text = new StringBuilder();
        String finish = null;
        for (String frame : body.split("\n\n")) {
            if (frame.equals("data: [DONE]")) {
                continue;
            }
            JsonNode chunk = JSON.readTree(frame.substring("data: ".length()));
            JsonNode c = chunk.path("choices").path(0);
            if (c.path("delta").hasNonNull("content")) {
                text.append(c.path("delta").get("content").textValue());
            }
            if (c.hasNonNull("finish_reason")) {
                finish = c.get("finish_reason").textValue();
            }
        }
        assertEquals("stop", finish, text.toString());
        assertFits(JSON.readTree(text.toString()), text.toString());
    }

    @Test
    void jsonObject_isAnObject_andLogprobsAreOfAllowedTokens() throws Exception {
        Response r = given().contentType("application/json").body(chat(",\"seed\":3,\"max_tokens\":300,\"logprobs\":true,\"top_logprobs\":2,"
                + "\"response_format\":{\"type\":\"json_object\"}")).post("/v1/chat/completions");
        assertEquals(200, r.statusCode(), r.asString());
        String content = r.path("choices[0].message.content");
        if ("stop".equals(r.path("choices[0].finish_reason"))) {
            assertTrue(JSON.readTree(content).isObject(), content);
        } else {
            assertTrue(Grammar.anyJsonObject().acceptsPrefix(content), "cut by max_tokens, still a prefix: " + content);
        }
        assertTrue(content.startsWith("{"), content);
        List<Map<String, Object>> lp = r.path("choices[0].logprobs.content");
        assertTrue(!lp.isEmpty());
        assertEquals("{", lp.get(0).get("token"), "the only token the grammar allows first");
        assertTrue(((Number) lp.get(0).get("logprob")).doubleValue() > -1e-3, "it carries the whole constrained mass: " + lp.get(0));
    }

    @Test
    void grammar_onChatAndCompletions() {
        String gbnf = "root ::= (\"yes\" | \"no\") \", \" [a-z]{3,8} \".\"";
        Grammar g = Grammar.parseGbnf(gbnf);
        String chat = given().contentType("application/json").body(Map.of("messages", List.of(Map.of("role", "user", "content", "Hi")),
                "grammar", gbnf, "seed", 1)).post("/v1/chat/completions").then().statusCode(200).extract().path("choices[0].message.content");
        assertTrue(g.accepts(chat), chat);
        Response c = given().contentType("application/json").body(Map.of("prompt", "Once upon a time", "grammar", gbnf, "seed", 2,
                "n", 2, "max_tokens", 40)).post("/v1/completions");
        assertEquals(200, c.statusCode(), c.asString());
        for (int i = 0; i < 2; i++) {
            String text = c.path("choices[" + i + "].text");
            assertTrue(g.accepts(text), text);
            assertEquals("stop", c.path("choices[" + i + "].finish_reason"));
        }
    }

    @Test
    void badGrammarsAndSchemas_are400sNamingTheField() {
        assertError(chat(",\"grammar\":\"root ::= foo\""), "grammar", "foo");
        assertError(chat(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":"
                + "{\"type\":\"string\",\"pattern\":\"^a\"}}}"), "response_format", "pattern");
        assertError(chat(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":"
                + "{\"type\":\"object\",\"properties\":{\"when\":{\"type\":\"string\",\"format\":\"date-time\"}}}}}"), "response_format", "format");
        assertError(chat(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{}}}"), "response_format", "name");
        assertError(chat(",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\"}}"), "response_format", "schema");
        assertError(chat(",\"response_format\":{\"type\":\"xml\"}"), "response_format", "xml");
        assertError(chat(",\"response_format\":{\"type\":\"json_object\"},\"grammar\":\"root ::= \\\"a\\\"\""), "grammar", "together");
        Response r = given().contentType("application/json").body("{\"prompt\":\"x\",\"grammar\":\"root ::= [\"}").post("/v1/completions");
        assertEquals(400, r.statusCode(), r.asString());
        assertEquals("grammar", r.path("error.param"));
    }

    private static void assertError(String body, String param, String part) {
        Response r = given().contentType("application/json").body(body).post("/v1/chat/completions");
        assertEquals(400, r.statusCode(), r.asString());
        assertEquals("invalid_request_error", r.path("error.type"), r.asString());
        assertEquals(param, r.path("error.param"), r.asString());
        String message = r.path("error.message");
        assertTrue(message.contains(part), message + " should name " + part);
    }
}
