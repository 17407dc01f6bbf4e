package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code juno.api.request-timeout} (here 1 s): a whole reply still generating then is a 504 in OpenAI's error shape
 * ({@code request_timeout}); a stream ends with an error event of that code and {@code [DONE]}; the KV blocks are free
 * afterwards; a request done in time is not touched.
 */
@QuarkusTest
@TestProfile(RequestTimeoutApiTest.Deadline.class)
class RequestTimeoutApiTest {

    public static final class Deadline implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("juno.api.request-timeout", "1s");
        }
    }

    /** 16 choices of 400 tokens; four of them at once are seconds of work for the bundled model, well past 1 s. */
    private static final String LONG = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":400,\"n\":16,\"temperature\":1,\"seed\":5";

    /** Three more long requests in the background, so that the measured one shares its steps. */
    static java.util.concurrent.CompletableFuture<?> background(String body) {
        java.util.concurrent.CompletableFuture<?>[] all = new java.util.concurrent.CompletableFuture<?>[3];
        for (int i = 0; i < all.length; i++) {
            all[i] = java.util.concurrent.CompletableFuture.runAsync(
                    () -> given().contentType("application/json").body(body).post("/v1/completions").asString());
        }
        return java.util.concurrent.CompletableFuture.allOf(all);
    }

    @BeforeEach
    void ready() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    private static void assertKvFree() throws InterruptedException {
        int used = -1;
        for (int i = 0; i < 100; i++) {
            used = given().get("/v1/cluster/health").jsonPath().getInt("kvBlocksUsed");
            if (used == 0) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("KV blocks still in use: " + used);
    }

    @Test
    void aWholeReplyPastTheDeadline_is504RequestTimeout() throws Exception {
        var others = background(LONG + "}");
        long t0 = System.nanoTime();
        Response r = given().contentType("application/json").body(LONG + "}").post("/v1/completions");
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertEquals(504, r.statusCode(), r.asString());
        assertEquals("request_timeout", r.jsonPath().getString("error.code"), r.asString());
        assertEquals("server_error", r.jsonPath().getString("error.type"));
        assertTrue(r.jsonPath().getString("error.message").contains("1 s"), r.asString());
        assertTrue(ms >= 900 && ms < 6_000, "answered at the deadline: " + ms + " ms");
        others.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertKvFree();
    }

    @Test
    void aStreamPastTheDeadline_endsWithAnErrorEventAndDone() throws Exception {
        var others = background(LONG + "}");
        String sse = given().contentType("application/json").body(LONG + ",\"stream\":true}").post("/v1/completions").asString();
        assertTrue(sse.contains("\"code\":\"request_timeout\""), sse.substring(Math.max(0, sse.length() - 800)));
        assertTrue(sse.strip().endsWith("data: [DONE]"), sse.substring(Math.max(0, sse.length() - 300)));
        assertTrue(sse.contains("\"text\""), "it was streaming when the deadline came");
        others.get(30, java.util.concurrent.TimeUnit.SECONDS);
        assertKvFree();
    }

    @Test
    void aShortRequest_isDoneInTime() {
        given().contentType("application/json").body("{\"prompt\":\"Once\",\"max_tokens\":3}").post("/v1/completions"); // warm
        Response r = given().contentType("application/json")
                .body("{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":3}").post("/v1/completions");
        assertEquals(200, r.statusCode(), r.asString());
        assertEquals("length", r.jsonPath().getString("choices[0].finish_reason"));
    }
}
