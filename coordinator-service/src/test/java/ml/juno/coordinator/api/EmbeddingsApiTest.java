package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.engine.EngineStats;
import ml.juno.coordinator.service.EngineProducer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code POST /v1/embeddings} on the bundled stories260K (64-wide hidden states), as an HTTP client sees it. */
@QuarkusTest
class EmbeddingsApiTest {

    @jakarta.inject.Inject
    EngineProducer engines;

    @BeforeEach
    void ready() throws InterruptedException {
        ApiTestSupport.awaitReady();
    }

    private static Response post(Object body) {
        return given().contentType("application/json").body(body).post("/v1/embeddings");
    }

    private static float[] vector(Response r, int i) {
        List<Number> v = r.path("data[" + i + "].embedding");
        float[] out = new float[v.size()];
        for (int k = 0; k < out.length; k++) {
            out[k] = v.get(k).floatValue();
        }
        return out;
    }

    @Test
    void aString_givesOneUnitVectorOfTheModelsWidth_inOpenAisShape() {
        Response r = post(Map.of("model", "stories260K", "input", "Once upon a time"));
        assertEquals(200, r.statusCode(), r.asString());
        assertEquals("list", r.path("object"));
        assertEquals("stories260K", r.path("model"));
        assertEquals("embedding", r.path("data[0].object"));
        assertEquals(0, (int) r.path("data[0].index"));
        float[] v = vector(r, 0);
        assertEquals(64, v.length);
        double ss = 0;
        for (float x : v) {
            ss += (double) x * x;
        }
        assertEquals(1.0, Math.sqrt(ss), 1e-5);
        List<Integer> tokens = given().contentType("application/json")
                .body(Map.of("text", "Once upon a time", "add_special", true)).post("/v1/tokenize").path("tokens");
        assertEquals(tokens.size(), (int) r.path("usage.prompt_tokens"));
        assertEquals(tokens.size(), (int) r.path("usage.total_tokens"));
        // the same tokens given as ids give the same vector
        Response ids = post(Map.of("input", tokens));
        assertEquals(200, ids.statusCode(), ids.asString());
        assertEquals(java.util.Arrays.toString(v), java.util.Arrays.toString(vector(ids, 0)));
    }

    @Test
    void severalInputs_comeBackInOrder_eachAsItIsAlone_andBase64IsTheSameFloats() {
        List<String> texts = List.of("The little dog", "Once upon a time there was a girl named Lily", "Tom");
        Response all = post(Map.of("input", texts, "user", "someone"));
        assertEquals(200, all.statusCode(), all.asString());
        Response b64 = post(Map.of("input", texts, "encoding_format", "base64", "dimensions", 64));
        assertEquals(200, b64.statusCode(), b64.asString());
        for (int i = 0; i < texts.size(); i++) {
            assertEquals(i, (int) all.path("data[" + i + "].index"));
            Response alone = post(Map.of("input", texts.get(i)));
            assertEquals(java.util.Arrays.toString(vector(alone, 0)), java.util.Arrays.toString(vector(all, i)), "input " + i);
            ByteBuffer bytes = ByteBuffer.wrap(Base64.getDecoder().decode((String) b64.path("data[" + i + "].embedding")))
                    .order(ByteOrder.LITTLE_ENDIAN);
            float[] decoded = new float[bytes.remaining() / 4];
            bytes.asFloatBuffer().get(decoded);
            assertEquals(java.util.Arrays.toString(vector(all, i)), java.util.Arrays.toString(decoded), "base64 " + i);
        }
        assertNotEquals(java.util.Arrays.toString(vector(all, 0)), java.util.Arrays.toString(vector(all, 2)));
        Response arrays = post(Map.of("input", List.of(List.of(1, 400, 30), List.of(1, 5))));
        assertEquals(200, arrays.statusCode(), arrays.asString());
        assertEquals(5, (int) arrays.path("usage.prompt_tokens"));
        assertEquals(2, ((List<?>) arrays.path("data")).size());
    }

    /** The queue holds 64 sequences by default; a request of 300 inputs is admitted whole and answered in order. */
    @Test
    void moreInputsThanTheQueueHolds_areAdmittedAsOneRequest() {
        List<List<Integer>> inputs = new java.util.ArrayList<>();
        for (int i = 0; i < 300; i++) {
            inputs.add(List.of(1, 3 + i % 500, 3 + (i * 7) % 500));
        }
        Response r = post(Map.of("input", inputs));
        assertEquals(200, r.statusCode(), r.asString());
        assertEquals(300, ((List<?>) r.path("data")).size());
        assertEquals(900, (int) r.path("usage.prompt_tokens"));
        assertEquals(299, (int) r.path("data[299].index"));
        assertEquals(java.util.Arrays.toString(vector(post(Map.of("input", inputs.get(123))), 0)), java.util.Arrays.toString(vector(r, 123)));
    }

    @Test
    void aWholeReply_saysTheServersTime() {
        Response r = post(Map.of("input", "The little dog"));
        assertEquals(200, r.statusCode(), r.asString());
        assertTrue(Long.parseLong(r.header("X-Juno-Latency-Ms")) >= 0, r.headers().toString());
    }

    /**
     * A client that hangs up while its inputs run cancels them: 1,024 inputs of 1,800 tokens (about 20 s of prefill on
     * two cores) are dropped within seconds of the connection closing, and the engine is idle again.
     */
    @Test
    void aClientThatHangsUp_cancelsEveryInputStillRunning() throws Exception {
        StringBuilder json = new StringBuilder(8 << 20).append("{\"input\":[");
        for (int i = 0; i < 1024; i++) {
            json.append(i == 0 ? "[" : ",[");
            for (int k = 0; k < 1800; k++) {
                json.append(k == 0 ? "" : ",").append(3 + (i * 31 + k * 7) % 500);
            }
            json.append(']');
        }
        byte[] body = json.append("]}").toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        EngineStats before = stats();
        assertEquals(0, before.running() + before.queued(), "idle before: " + before);
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", io.restassured.RestAssured.port)) {
            java.io.OutputStream out = socket.getOutputStream();
            out.write(("POST /v1/embeddings HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
                    + body.length + "\r\n\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            long until = System.nanoTime() + 30_000_000_000L;
            long steps = stats().steps();
            while ((stats().running() == 0 || stats().steps() < steps + 3) && System.nanoTime() < until) {
                Thread.sleep(20);
            }
            assertTrue(stats().running() > 0 && stats().steps() >= steps + 3, "the inputs are running: " + stats());
        }
        long closed = System.nanoTime();
        EngineStats after = stats();
        while ((after.running() > 0 || after.queued() > 0 || after.kvBlocksUsed() > 0) && System.nanoTime() - closed < 5_000_000_000L) {
            Thread.sleep(20);
            after = stats();
        }
        assertEquals(0, after.running() + after.queued(), "inputs still running 5 s after the client left: " + after);
        assertEquals(0, after.kvBlocksUsed(), "KV blocks still held: " + after);
        assertEquals(200, post(Map.of("input", "Tom")).statusCode(), "the server still answers");
    }

    private EngineStats stats() {
        return engines.current().orElseThrow().engine().stats();
    }

    @Test
    void badRequests_areRefusedWith400_namingTheField() {
        assertRefused(post(Map.of("input", "x", "dimensions", 32)), "dimensions", "64");
        assertRefused(post(Map.of("input", List.of())), "input", "empty");
        assertRefused(post(Map.of("input", List.of("fine", ""))), "input", "input[1]");
        assertRefused(post(Map.of("input", List.of(List.of(1, 2), List.of(1, 999999)))), "input", "input[1]");
        int[] tooLong = new int[5000];
        java.util.Arrays.fill(tooLong, 5);
        assertRefused(post(Map.of("input", List.of(List.of(1), tooLong))), "input", "input[1] is 5000 tokens");
        assertRefused(post(Map.of("input", "x", "encoding_format", "int8")), "encoding_format", "base64");
        assertEquals(400, post(Map.of("input", 5)).statusCode());
        assertEquals(400, post(Map.of("model", "stories260K")).statusCode());
        assertEquals(404, post(Map.of("model", "nope", "input", "x")).statusCode());
    }

    private static void assertRefused(Response r, String param, String inMessage) {
        assertEquals(400, r.statusCode(), r.asString());
        assertEquals(param, r.path("error.param"), r.asString());
        String message = r.path("error.message");
        assertTrue(message.contains(inMessage), message);
    }
}
