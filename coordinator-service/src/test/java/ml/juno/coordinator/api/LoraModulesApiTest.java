package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.engine.LoraModulesEngineTest;
import ml.juno.engine.model.block.Projection;
import org.junit.jupiter.api.Test;

/** {@code --lora-modules} over HTTP: each adapter is a model of its own in /v1/models (parent: the base), and requests pick it by name. */
@QuarkusTest
@TestProfile(LoraModulesApiTest.WithAdapter.class)
class LoraModulesApiTest {

    public static final class WithAdapter implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            try {
                Path dir = Files.createTempDirectory("juno-lora-api");
                dir.toFile().deleteOnExit();
                Path model = Path.of(System.getProperty("juno.models.dir", "../models"), "stories260K.gguf");
                Path a = LoraModulesEngineTest.adapter(dir, "tuned", model, List.of(Projection.values()), 7);
                a.toFile().deleteOnExit();
                return Map.of("juno.lora-modules", "tuned=" + a);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static String complete(String model) {
        Response r = given().contentType("application/json")
                .body("{\"model\":\"" + model + "\",\"prompt\":\"Once upon a time\",\"max_tokens\":16,\"temperature\":0}")
                .post("/v1/completions");
        assertEquals(200, r.statusCode(), r.asString());
        return r.path("choices[0].text");
    }

    @Test
    void adapterIsListedWithItsParent_andARequestNamingItGetsIt() throws InterruptedException {
        ApiTestSupport.awaitReady();
        Response models = given().get("/v1/models");
        assertEquals(List.of("stories260K", "tuned"), models.path("data.id"));
        assertNull(models.path("data[0].parent"));
        assertEquals("stories260K", models.path("data[1].parent"));
        assertEquals("stories260K", given().get("/v1/models/tuned").path("parent"));
        String base = complete("stories260K");
        String tuned = complete("tuned");
        assertNotEquals(base, tuned, "the adapter changes the greedy completion");
        assertEquals(tuned, complete("tuned"), "and deterministically (a second time from the prefix cache)");
        assertEquals(base, complete("stories260K"));
        given().contentType("application/json").body("{\"model\":\"nope\",\"prompt\":\"x\",\"max_tokens\":2}")
                .post("/v1/completions").then().statusCode(404);
    }
}
