package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * Seeded mutation fuzzing of the request mapping: valid chat and completion bodies with bytes flipped, cut or
 * duplicated, fields dropped, retyped or set to extreme values, sent to the running API. Every answer is a 200 or a
 * 4xx in OpenAI's error envelope, never a 500, and the server stays ready. {@code -Djuno.fuzz.requests=N} (default
 * 150), {@code -Djuno.fuzz.seed=S}.
 */
@QuarkusTest
class RequestMappingFuzzTest {

    private static final int REQUESTS = Integer.getInteger("juno.fuzz.requests", 150);
    private static final long SEED = Long.getLong("juno.fuzz.seed", 0x72657175L);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<Integer> ALLOWED = Set.of(200, 400, 404, 413, 415, 422, 429);

    private static final List<String> SEEDS = List.of(
            "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":4,\"temperature\":0.7,"
                    + "\"top_p\":0.9,\"stop\":[\"x\"],\"n\":1,\"seed\":3,\"logprobs\":true,\"top_logprobs\":2,\"logit_bias\":{\"5\":1}}",
            "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"system\",\"content\":\"s\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\","
                    + "\"text\":\"Hi\"}]}],\"max_tokens\":3,\"stream\":true,\"stream_options\":{\"include_usage\":true}}",
            "{\"model\":\"stories260K\",\"prompt\":\"Once upon\",\"max_tokens\":4,\"echo\":false,\"frequency_penalty\":0.5,\"presence_penalty\":0.1}",
            "{\"model\":\"stories260K\",\"prompt\":[1,2,3],\"max_tokens\":2,\"min_p\":0.1,\"top_k\":5}");
    private static final Object[] VALUES = {null, -1, 0, 1, 2, 3, 16, Integer.MAX_VALUE, Long.MIN_VALUE, 1e308, -1e-9, Double.NaN, "", "x",
            "9999999999999999999999", true, List.of(), List.of(1, "a"), java.util.Map.of("a", 1), "\u0000", "\uD800"};

    private static byte[] mutate(String seed, SplittableRandom rnd) throws Exception {
        if (rnd.nextInt(3) == 0) { // bytes
            byte[] b = seed.getBytes(StandardCharsets.UTF_8);
            int edits = 1 + rnd.nextInt(4);
            for (int i = 0; i < edits; i++) {
                int at = rnd.nextInt(b.length);
                switch (rnd.nextInt(3)) {
                    case 0 -> b[at] = (byte) rnd.nextInt(256);
                    case 1 -> b = java.util.Arrays.copyOf(b, at);
                    default -> {
                        byte[] c = new byte[b.length + 1];
                        System.arraycopy(b, 0, c, 0, at);
                        c[at] = b[at];
                        System.arraycopy(b, at, c, at + 1, b.length - at);
                        b = c;
                    }
                }
                if (b.length == 0) {
                    break;
                }
            }
            return b;
        }
        ObjectNode o = (ObjectNode) JSON.readTree(seed);
        List<String> fields = new java.util.ArrayList<>();
        o.fieldNames().forEachRemaining(fields::add);
        String f = fields.get(rnd.nextInt(fields.size()));
        switch (rnd.nextInt(3)) {
            case 0 -> o.remove(f);
            case 1 -> o.set(f, JSON.valueToTree(VALUES[rnd.nextInt(VALUES.length)]));
            default -> o.set("x_" + rnd.nextInt(100), JSON.valueToTree(VALUES[rnd.nextInt(VALUES.length)]));
        }
        JsonNode max = o.get("max_tokens");
        if (max == null || !max.isNumber() || max.asLong() > 16) {
            o.put("max_tokens", 4); // keep generation short; the mapping of other fields is what is fuzzed
        }
        return JSON.writeValueAsBytes(o);
    }

    @Test
    void mutatedRequests_getA200OrA4xxEnvelope_neverA500() throws Exception {
        ApiTestSupport.awaitReady();
        SplittableRandom rnd = new SplittableRandom(SEED);
        int ok = 0;
        int refused = 0;
        for (int i = 0; i < REQUESTS; i++) {
            String seed = SEEDS.get(rnd.nextInt(SEEDS.size()));
            String path = seed.contains("\"prompt\"") ? "/v1/completions" : "/v1/chat/completions";
            byte[] body = mutate(seed, rnd);
            Response r = given().contentType("application/json").body(body).post(path);
            String what = "seed " + SEED + " request " + i + " " + path + " " + new String(body, StandardCharsets.UTF_8);
            assertTrue(ALLOWED.contains(r.statusCode()), r.statusCode() + " for " + what + ": " + r.asString());
            if (r.statusCode() == 200) {
                ok++;
            } else {
                refused++;
                assertNotNull(r.path("error.message"), what + ": " + r.asString());
                assertNotNull(r.path("error.type"), what);
            }
        }
        assertEquals(200, given().get("/q/health/ready").statusCode(), "still serving");
        assertTrue(ok > 0 && refused > 0, ok + " ok, " + refused + " refused");
        System.out.println("request fuzz: " + REQUESTS + " requests, " + ok + " ok, " + refused + " refused with 4xx");
    }
}
