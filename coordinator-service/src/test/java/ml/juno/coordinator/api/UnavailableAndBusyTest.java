package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** With a queue of 0 every generation is refused: 429 with Retry-After, in the error envelope. */
@QuarkusTest
@TestProfile(UnavailableAndBusyTest.NoQueue.class)
class UnavailableAndBusyTest {

    public static final class NoQueue implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("juno.max-queue", "0");
        }
    }

    @Test
    void fullQueue_is429WithRetryAfter() throws InterruptedException {
        ApiTestSupport.awaitReady();
        Response r = given().contentType("application/json")
                .body("{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"stream\":true}")
                .post("/v1/chat/completions");
        assertEquals(429, r.statusCode(), r.asString());
        assertNotNull(r.header("Retry-After"));
        assertEquals("rate_limit_error", r.path("error.type"));
    }
}
