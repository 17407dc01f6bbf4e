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

/** {@code DELETE /v1/models/{id}} unloads the served model: its own boot, since the model is gone afterwards. */
@QuarkusTest
@TestProfile(NativeUnloadTest.OwnBoot.class)
class NativeUnloadTest {

    public static final class OwnBoot implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("juno.max-queue", "17"); // any difference gives this test its own server
        }
    }

    @Test
    void deletingTheModel_unloadsIt_andEverythingSaysSo() throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (given().get("/q/health/ready").statusCode() != 200 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(404, given().delete("/v1/models/gpt-9").statusCode(), "another id is not found");
        Response d = given().delete("/v1/models/stories260K");
        assertEquals(200, d.statusCode(), d.asString());
        assertEquals(true, d.path("deleted"));
        assertEquals(503, given().get("/q/health/ready").statusCode());
        Response chat = given().contentType("application/json").body("{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
                .post("/v1/chat/completions");
        assertEquals(503, chat.statusCode(), chat.asString());
        Response inference = given().contentType("application/json").body("{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
                .post("/v1/inference");
        assertEquals(503, inference.statusCode());
        assertEquals("not_ready", inference.path("error"));
        assertTrue(inference.<Integer>path("retryAfterMs") > 0);
        Response h = given().get("/v1/cluster/health");
        assertEquals(503, h.statusCode());
        assertEquals("DOWN", h.path("status"));
        assertTrue(h.<String>path("state").startsWith("unloaded"), h.asString());
        assertEquals(0, given().get("/v1/models").then().statusCode(200).extract().<java.util.List<?>>path("data").size());
    }
}
