package ml.juno.coordinator;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import ml.juno.engine.EngineInfo;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.cpu.NativeKernels;
import org.junit.jupiter.api.Test;

@QuarkusTest
class CoordinatorHealthTest {

    @Test
    void liveness_isUp() {
        given().when().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
    }

    /** Once the model is loaded, readiness says which kernels compute it: the engine's choice on this machine. */
    @Test
    void readiness_reportsTheBackendAndIsaOfTheLoadedModel() throws InterruptedException {
        Response ready = awaitReady();
        NativeKernels.Loaded l = NativeKernels.load();
        boolean nat = Backends.requestedKind() != Backends.Kind.JAVA && l.ok();
        String check = "checks.find { it.name == 'model' }.data.";
        assertEquals(nat ? "native" : "java", ready.path(check + "backend"), ready.asString());
        assertEquals(nat ? l.kernels().isa() : "vector" + EngineInfo.FLOAT_SPECIES.vectorBitSize(), ready.path(check + "isa"), ready.asString());
        assertEquals("stories260K", ready.path(check + "model"), ready.asString());
    }

    private static Response awaitReady() throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            Response r = given().get("/q/health/ready");
            if (r.statusCode() == 200) {
                return r;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("model not ready: " + given().get("/q/health/ready").asString());
    }
}
