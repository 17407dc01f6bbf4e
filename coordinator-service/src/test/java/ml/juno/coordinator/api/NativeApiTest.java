package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The old native API on the bundled model (same boot as {@link ApiBehaviourTest}): same engine, the old shapes. */
@QuarkusTest
class NativeApiTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String REQUEST = "{\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],"
            + "\"sampling\":{\"temperature\":0,\"maxTokens\":12}}";

    @BeforeEach
    void ready() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    @Test
    void inference_answersTheOldShape_withTheSameTextAsTheOpenAiRoute() {
        Response r = given().contentType("application/json").body(REQUEST).post("/v1/inference");
        assertEquals(200, r.statusCode(), r.asString());
        String text = r.path("text");
        assertFalse(text.isEmpty(), r.asString());
        assertEquals("stories260K", r.path("model"));
        int completion = r.path("completionTokens");
        assertTrue(completion >= 1 && completion <= 12, r.asString());
        assertTrue(r.<Integer>path("promptTokens") > 0, r.asString());
        assertTrue(List.of("length", "stop").contains(r.<String>path("finishReason")), r.asString());
        assertTrue(r.<Integer>path("latencyMs") >= 0);
        assertTrue(r.header("X-Juno-Latency-Ms") != null);
        String openai = given().contentType("application/json")
                .body("{\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"temperature\":0,\"max_tokens\":12}")
                .post("/v1/chat/completions").then().statusCode(200).extract().path("choices[0].message.content");
        assertEquals(openai, text, "one engine behind both APIs");
    }

    @Test
    void inferenceStream_sendsTokenEvents_thenOneClosingEvent() throws Exception {
        String whole = given().contentType("application/json").body(REQUEST).post("/v1/inference").then().statusCode(200)
                .extract().path("text");
        Response r = given().contentType("application/json").body(REQUEST).post("/v1/inference/stream");
        assertEquals(200, r.statusCode(), r.asString());
        assertTrue(r.contentType().startsWith("text/event-stream"), r.contentType());
        List<JsonNode> events = new ArrayList<>();
        for (String frame : r.asString().split("\n\n")) {
            assertTrue(frame.startsWith("data: "), frame);
            events.add(JSON.readTree(frame.substring(6)));
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode e : events.subList(0, events.size() - 1)) {
            assertFalse(e.get("isComplete").asBoolean(), e.toString());
            assertTrue(e.get("tokenId").isInt(), e.toString());
            text.append(e.get("token").asText());
        }
        JsonNode last = events.getLast();
        assertTrue(last.get("isComplete").asBoolean(), last.toString());
        assertEquals(events.size() - 1, last.get("completionTokens").asInt(), "one event per token: " + last);
        assertTrue(last.get("promptTokens").asInt() > 0 && last.has("finishReason") && last.has("latencyMs"), last.toString());
        assertEquals(whole, text.toString());
    }

    @Test
    void errors_keepTheOldShape() {
        Response json = given().contentType("application/json").body("{bad").post("/v1/inference");
        assertEquals(400, json.statusCode());
        assertEquals(400, (int) json.path("code"));
        assertEquals("invalid_request", json.path("error"));
        assertTrue(json.<String>path("message").contains("parse"), json.asString());

        Response hot = given().contentType("application/json")
                .body("{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"sampling\":{\"temperature\":5}}").post("/v1/inference");
        assertEquals(400, hot.statusCode(), hot.asString());
        assertTrue(hot.<String>path("message").contains("sampling.temperature"), hot.asString());

        Response none = given().contentType("application/json").body("{\"sampling\":{}}").post("/v1/inference/stream");
        assertEquals(400, none.statusCode(), none.asString());
        assertEquals("invalid_request", none.path("error"));

        Response model = given().contentType("application/json")
                .body("{\"model\":\"gpt-9\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}").post("/v1/inference");
        assertEquals(404, model.statusCode(), model.asString());
        assertEquals("model_not_found", model.path("error"));
    }

    @Test
    void clusterHealth_tellsTheRealState_andTheOpenApiDocumentListsTheNativeRoutes() {
        Response h = given().get("/v1/cluster/health");
        assertEquals(200, h.statusCode(), h.asString());
        assertEquals("UP", h.path("status"));
        assertEquals("local", h.path("mode"));
        assertEquals("stories260K", h.path("model"));
        assertTrue(h.<Integer>path("kvBlocksTotal") > 0, h.asString());
        assertEquals(0, h.<List<?>>path("nodes").size(), "in process: no nodes");
        String openapi = given().get("/q/openapi").then().statusCode(200).extract().asString();
        for (String route : List.of("/v1/inference", "/v1/inference/stream", "/v1/cluster/health")) {
            assertTrue(openapi.contains(route), route);
        }
    }
}
