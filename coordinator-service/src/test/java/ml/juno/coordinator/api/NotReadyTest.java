package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A model that cannot load leaves the server live but not ready: 503 in the error envelope, never a 500. */
@QuarkusTest
@TestProfile(NotReadyTest.BrokenModel.class)
class NotReadyTest {

    public static final class BrokenModel implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("juno.model-path", "/no/such/model.gguf");
        }
    }

    @Test
    void modelThatFailedToLoad_isLiveNotReady_and503() {
        given().get("/q/health/live").then().statusCode(200);
        Response ready = given().get("/q/health/ready");
        assertEquals(503, ready.statusCode());
        Response r = given().contentType("application/json")
                .body("{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}").post("/v1/chat/completions");
        assertEquals(503, r.statusCode(), r.asString());
        assertEquals("service_unavailable_error", r.path("error.type"));
        assertTrue(r.header("Retry-After") != null);
        assertEquals(0, given().get("/v1/models").then().statusCode(200).extract().<java.util.List<?>>path("data").size());
    }
}
