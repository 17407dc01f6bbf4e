package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tool fields over HTTP on the bundled stories260K (same boot as {@link ApiBehaviourTest}). */
@QuarkusTest
class ToolsApiTest {

    static final String TOOLS = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":\"Weather\","
            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}]";
    static final String USER = "\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}]";
    static final String ROUND = "\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"},"
            + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
            + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},"
            + "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"21 degrees\"}]";

    @BeforeEach
    void ready() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    static Response chat(String fields) {
        return given().contentType("application/json").body("{\"model\":\"stories260K\",\"max_tokens\":12,\"temperature\":0," + fields + "}")
                .post("/v1/chat/completions");
    }

    @Test
    void toolRoundTripHistory_isAccepted_andToolsChangeThePrompt() {
        Response r = chat(ROUND + "," + TOOLS);
        assertEquals(200, r.statusCode(), r.asString());
        int withTools = r.path("usage.prompt_tokens");
        int without = chat(ROUND).path("usage.prompt_tokens");
        assertTrue(withTools > without + 20, "the tool block is in the prompt: " + withTools + " vs " + without);
        String finish = r.path("choices[0].finish_reason");
        assertTrue(finish.equals("stop") || finish.equals("length") || finish.equals("tool_calls"), finish);
    }

    @Test
    void toolChoiceNone_isPlainTextWithTheSamePromptAsNoTools() {
        Response none = chat(USER + "," + TOOLS + ",\"tool_choice\":\"none\"");
        Response plain = chat(USER);
        assertEquals(200, none.statusCode(), none.asString());
        assertEquals((Object) plain.path("usage.prompt_tokens"), none.path("usage.prompt_tokens"));
        assertEquals((Object) plain.path("choices[0].message.content"), none.path("choices[0].message.content"));
        assertNull(none.path("choices[0].message.tool_calls"));
    }

    @Test
    void autoWithTools_streamReassemblesToTheBlockingAnswer() {
        String fields = USER + "," + TOOLS + ",\"seed\":7";
        Response blocking = chat(fields);
        assertEquals(200, blocking.statusCode(), blocking.asString());
        String body = chat(fields + ",\"stream\":true").asString();
        StringBuilder content = new StringBuilder();
        String finish = null;
        for (String frame : body.split("\n\n")) {
            if (frame.equals("data: [DONE]")) {
                continue;
            }
            io.restassured.path.json.JsonPath j = new io.restassured.path.json.JsonPath(frame.substring(6));
            String c = j.getString("choices[0].delta.content");
            content.append(c == null ? "" : c);
            finish = j.getString("choices[0].finish_reason") != null ? j.getString("choices[0].finish_reason") : finish;
        }
        String expected = blocking.path("choices[0].message.content");
        assertEquals(expected == null ? "" : expected, content.toString());
        assertEquals(blocking.path("choices[0].finish_reason"), finish);
    }

    static final String FORCED_TOOLS = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":"
            + "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":6},\"unit\":{\"enum\":[\"c\",\"f\"]}},"
            + "\"required\":[\"city\",\"unit\"]}}},{\"type\":\"function\",\"function\":{\"name\":\"get_time\",\"parameters\":"
            + "{\"type\":\"object\",\"properties\":{\"zone\":{\"enum\":[\"UTC\",\"CET\"]}},\"required\":[\"zone\"]}}}]";

    @Test
    void forcedNamedCall_isConstrainedToThatFunctionsSchema() throws Exception {
        for (long seed = 1; seed <= 3; seed++) {
            Response r = given().contentType("application/json").body("{\"model\":\"stories260K\",\"max_tokens\":120,\"temperature\":1,"
                    + "\"seed\":" + seed + ",\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}]," + FORCED_TOOLS
                    + ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}}").post("/v1/chat/completions");
            assertEquals(200, r.statusCode(), r.asString());
            assertEquals("tool_calls", r.path("choices[0].finish_reason"), r.asString());
            assertNull(r.path("choices[0].message.content"), r.asString());
            assertEquals("get_weather", r.path("choices[0].message.tool_calls[0].function.name"));
            String args = r.path("choices[0].message.tool_calls[0].function.arguments");
            com.fasterxml.jackson.databind.JsonNode a = new com.fasterxml.jackson.databind.ObjectMapper().readTree(args);
            assertTrue(a.path("city").isTextual() && a.path("city").asText().length() <= 6, args);
            assertTrue(a.path("unit").asText().matches("[cf]"), args);
            assertEquals(2, a.size(), args);
            assertTrue(((String) r.path("choices[0].message.tool_calls[0].id")).matches("call_[A-Za-z0-9]{24}"));
        }
    }

    @Test
    void required_streamReassemblesToTheBlockingCalls() throws Exception {
        String fields = "\"max_tokens\":120,\"temperature\":1,\"seed\":5,\"messages\":[{\"role\":\"user\",\"content\":\"Weather?\"}],"
                + FORCED_TOOLS + ",\"tool_choice\":\"required\",\"parallel_tool_calls\":false";
        Response blocking = given().contentType("application/json").body("{" + fields + "}").post("/v1/chat/completions");
        assertEquals(200, blocking.statusCode(), blocking.asString());
        assertEquals("tool_calls", blocking.path("choices[0].finish_reason"), blocking.asString());
        assertEquals(1, ((java.util.List<?>) blocking.path("choices[0].message.tool_calls")).size());
        String body = given().contentType("application/json").body("{" + fields + ",\"stream\":true}").post("/v1/chat/completions").asString();
        String name = null;
        StringBuilder args = new StringBuilder();
        String finish = null;
        for (String frame : body.split("\n\n")) {
            if (frame.equals("data: [DONE]")) {
                continue;
            }
            io.restassured.path.json.JsonPath j = new io.restassured.path.json.JsonPath(frame.substring(6));
            if (j.get("choices[0].delta.tool_calls") != null) {
                if (j.get("choices[0].delta.tool_calls[0].id") != null) {
                    name = j.getString("choices[0].delta.tool_calls[0].function.name");
                }
                args.append(j.getString("choices[0].delta.tool_calls[0].function.arguments"));
            }
            finish = j.getString("choices[0].finish_reason") != null ? j.getString("choices[0].finish_reason") : finish;
        }
        assertEquals((Object) blocking.path("choices[0].message.tool_calls[0].function.name"), name, body);
        assertEquals((Object) blocking.path("choices[0].message.tool_calls[0].function.arguments"), args.toString(), body);
        assertEquals("tool_calls", finish);
    }

    @Test
    void forcedCall_withAnUnsupportedSchemaFeature_is400NamingIt() {
        Response r = chat(USER + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\","
                + "\"properties\":{\"s\":{\"type\":\"string\",\"pattern\":\"^a\"}}}}}],\"tool_choice\":\"required\"");
        assertEquals(400, r.statusCode(), r.asString());
        assertEquals("tools", r.path("error.param"));
        assertTrue(((String) r.path("error.message")).contains("pattern"), r.asString());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "\"tool_choice\":\"auto\"," + USER + "| tool_choice",
        "\"parallel_tool_calls\":false," + USER + "| parallel_tool_calls",
        "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"nope\"}}," + TOOLS + "," + USER + "| tool_choice",
        "\"tool_choice\":\"sometimes\"," + TOOLS + "," + USER + "| tool_choice",
        "\"logprobs\":true," + TOOLS + "," + USER + "| logprobs",
        "\"tool_choice\":\"required\",\"response_format\":{\"type\":\"json_object\"}," + TOOLS + "," + USER + "| tool_choice",
        "\"tools\":[{\"type\":\"retrieval\",\"function\":{\"name\":\"f\"}}]," + USER + "| tools[0].type",
        "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"bad name\"}}]," + USER + "| tools[0].function.name",
        "\"messages\":[{\"role\":\"tool\",\"content\":\"21\"}]," + TOOLS + "| messages[0].tool_call_id",
        "\"messages\":[{\"role\":\"user\",\"content\":\"x\",\"tool_calls\":[{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}]| messages[0].tool_calls"})
    void toolMistakes_are400sNamingTheField(String fields, String param) {
        Response r = chat(fields);
        assertEquals(400, r.statusCode(), r.asString());
        assertEquals(param.strip(), r.path("error.param"), r.asString());
    }
}
