package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;

/** Shared steps of the API's @QuarkusTests. */
final class ApiTestSupport {

    private ApiTestSupport() {
    }

    /** The model loads in the background; wait until the readiness check says so (at most 30 s). */
    private static volatile boolean ready;

    static void awaitReady() throws InterruptedException {
        if (ready) {
            return;
        }
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (given().get("/q/health/ready").statusCode() == 200) {
                ready = true;
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("model not ready: " + given().get("/q/health/ready").asString());
    }
}
