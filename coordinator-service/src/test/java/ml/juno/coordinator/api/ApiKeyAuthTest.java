package ml.juno.coordinator.api;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * With API keys set (a key file and a fixed key) every {@code /v1} route refuses a request without a key, with a wrong
 * key and with a key just removed from the file (401, OpenAI's envelope); health stays open, metrics need a key; usage
 * is counted per key name; a key past its rate limit gets 429 {@code rate_limit_exceeded} with {@code Retry-After}.
 */
@QuarkusTest
@TestProfile(ApiKeyAuthTest.WithKeys.class)
class ApiKeyAuthTest {

    static final String ALICE = "sk-alice-0123456789abcdef";
    static final String BOB = "sk-bob-0123456789abcdef";
    static final String LIMITED = "sk-limited-0123456789abc";
    static final String OPS = "sk-ops-0123456789abcdef";
    static final Path KEY_FILE = keyFile();

    public static final class WithKeys implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("juno.api.key-file", KEY_FILE.toString(), "juno.api.keys", "ops:" + OPS, "juno.api.rate-limit", "12rpm",
                    "juno.api.max-concurrent-per-key", "1");
        }
    }

    private static Path keyFile() {
        try {
            Path f = Files.createTempFile("juno-keys-", ".txt");
            f.toFile().deleteOnExit();
            Files.writeString(f, "# test keys\nalice:" + ALICE + "\nbob:" + BOB + "\nlimited:" + LIMITED + "\n");
            return f;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every /v1 route, with a body that would succeed given a key. */
    record Route(String method, String path, String body) {
        Response call(RequestSpecification spec) {
            RequestSpecification s = body == null ? spec : spec.contentType("application/json").body(body);
            return method.equals("GET") ? s.get(path) : s.post(path);
        }
    }

    static final List<Route> ROUTES = List.of(
            new Route("POST", "/v1/chat/completions", "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":2}"),
            new Route("POST", "/v1/chat/completions",
                    "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":2,\"stream\":true}"),
            new Route("POST", "/v1/completions", "{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":2}"),
            new Route("GET", "/v1/models", null),
            new Route("GET", "/v1/models/stories260K", null),
            new Route("POST", "/v1/tokenize", "{\"text\":\"Once upon\"}"),
            new Route("POST", "/v1/detokenize", "{\"tokens\":[1,2]}"),
            new Route("GET", "/v1/no-such-route", null),
            new Route("GET", "/q/metrics", null),
            new Route("GET", "/q/openapi", null));

    static void assert401(Response r, String what) {
        assertEquals(401, r.statusCode(), what + ": " + r.asString());
        assertEquals("invalid_request_error", r.path("error.type"), what);
        assertNotNull(r.path("error.message"), what);
        assertEquals("Bearer", r.header("WWW-Authenticate"), what);
        assertFalse(r.asString().contains("sk-"), what + " echoes no key: " + r.asString());
    }

    @Test
    void everyRoute_withoutKey_withWrongKey_withRevokedKey_is401() throws Exception {
        ApiTestSupport.awaitReady();
        for (Route route : ROUTES) {
            String what = route.method() + " " + route.path();
            assert401(route.call(given()), what + " without a key");
            assertNull(route.call(given()).path("error.code"), what);
            Response wrong = route.call(given().header("Authorization", "Bearer sk-alice-0123456789abcdeX"));
            assert401(wrong, what + " with a wrong key");
            assertEquals("invalid_api_key", wrong.path("error.code"), what);
            assert401(route.call(given().header("Authorization", "Basic " + ALICE)), what + " not as Bearer");
        }
        // bob works, then is removed from the file: every route refuses him at once
        assertEquals(200, ROUTES.get(3).call(given().header("Authorization", "Bearer " + BOB)).statusCode());
        Files.writeString(KEY_FILE, "alice:" + ALICE + "\nlimited:" + LIMITED + "\n");
        Files.setLastModifiedTime(KEY_FILE, FileTime.fromMillis(System.currentTimeMillis() + 5000));
        for (Route route : ROUTES) {
            assert401(route.call(given().header("Authorization", "Bearer " + BOB)), route.method() + " " + route.path() + " with a revoked key");
        }
    }

    @Test
    void validKeys_pass_healthIsOpen_usageIsCountedPerKeyName() throws Exception {
        ApiTestSupport.awaitReady();
        assertEquals(200, given().get("/q/health/live").statusCode());
        assertEquals(200, given().get("/q/health/ready").statusCode());
        assertEquals(200, given().get("/").statusCode(), "the console page itself is static; its API calls carry the key");
        for (String asset : List.of("/favicon.ico", "/favicon.svg", "/webjars/marked/17.0.1/lib/marked.umd.js", "/webjars/dompurify/3.3.3/dist/purify.min.js")) {
            assertEquals(200, given().get(asset).statusCode(), asset + ": the console's files need no key");
        }
        assertEquals(401, given().get("/webjars/uplot/1.6.30/dist/uPlot.min.css").statusCode(), "only the console's own webjars are open");
        Response chat = ROUTES.get(0).call(given().header("Authorization", "Bearer " + ALICE));
        assertEquals(200, chat.statusCode(), chat.asString());
        int prompt = chat.path("usage.prompt_tokens");
        int completion = chat.path("usage.completion_tokens");
        Response stream = ROUTES.get(1).call(given().header("Authorization", "bearer " + OPS));
        assertEquals(200, stream.statusCode(), stream.asString());
        assertTrue(stream.asString().contains("data: [DONE]"), stream.asString());
        String metrics = given().header("Authorization", "Bearer " + OPS).get("/q/metrics").asString();
        assertTrue(metrics.contains("juno_key_tokens_prompt_total{key=\"alice\"} " + (double) prompt), metrics);
        assertTrue(metrics.contains("juno_key_tokens_completion_total{key=\"alice\"} " + (double) completion), metrics);
        assertTrue(metrics.contains("juno_key_requests_total{key=\"ops\"}"), metrics);
        assertTrue(metrics.contains("juno_api_unauthorized_total"), metrics);
        assertFalse(metrics.contains(ALICE) || metrics.contains(OPS), "no key in the metrics");
    }

    @Test
    void aKeyPastItsRateLimit_gets429WithRetryAfter_othersDoNot() throws Exception {
        ApiTestSupport.awaitReady();
        Response last = null;
        int ok = 0;
        for (int i = 0; i < 13; i++) {
            last = given().header("Authorization", "Bearer " + LIMITED).get("/v1/models");
            if (last.statusCode() == 200) {
                ok++;
            } else {
                break;
            }
        }
        assertEquals(12, ok, "12rpm: twelve requests pass");
        assertEquals(429, last.statusCode(), last.asString());
        assertEquals("rate_limit_exceeded", last.path("error.code"));
        int retryAfter = Integer.parseInt(last.header("Retry-After"));
        assertTrue(retryAfter >= 1 && retryAfter <= 60, "Retry-After " + retryAfter);
        assertEquals(200, given().header("Authorization", "Bearer " + ALICE).get("/v1/models").statusCode(), "alice has her own bucket");
        String metrics = given().header("Authorization", "Bearer " + OPS).get("/q/metrics").asString();
        assertTrue(metrics.contains("juno_key_rate_limited_total{key=\"limited\"} 1.0"), metrics);
    }

    @Test
    void aKeyWithAGenerationRunning_getsA429ForASecond_untilTheFirstEnds_otherKeysDoNot() throws Exception {
        ApiTestSupport.awaitReady();
        String longStream = "{\"model\":\"stories260K\",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story\"}],"
                + "\"max_tokens\":300,\"n\":4,\"stream\":true}";
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        java.net.URI url = java.net.URI.create(io.restassured.RestAssured.baseURI + ":" + io.restassured.RestAssured.port + "/v1/chat/completions");
        java.net.http.HttpResponse<java.io.InputStream> first = http.send(java.net.http.HttpRequest.newBuilder(url)
                .header("Authorization", "Bearer " + ALICE).header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(longStream)).build(), java.net.http.HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, first.statusCode());
        try (java.io.BufferedReader lines = new java.io.BufferedReader(new java.io.InputStreamReader(first.body(), java.nio.charset.StandardCharsets.UTF_8))) {
            assertTrue(lines.readLine().startsWith("data: "), "the first stream has started");
            Response second = ROUTES.get(0).call(given().header("Authorization", "Bearer " + ALICE));
            assertEquals(429, second.statusCode(), second.asString());
            assertEquals("rate_limit_exceeded", second.path("error.code"));
            assertTrue(second.path("error.message").toString().contains("at most 1 at once"), second.asString());
            assertEquals("1", second.header("Retry-After"));
            assertEquals(200, ROUTES.get(0).call(given().header("Authorization", "Bearer " + OPS)).statusCode(), "ops has places of its own");
            assertEquals(200, given().header("Authorization", "Bearer " + ALICE).get("/v1/models").statusCode(), "only generation is limited");
            while (lines.readLine() != null) {
                // read the first stream to its end
            }
        }
        int status = 0;
        for (int i = 0; i < 5 && status != 200; i++) { // few tries: alice has 12 requests a minute // the place comes back when the first response has ended
            status = ROUTES.get(0).call(given().header("Authorization", "Bearer " + ALICE)).statusCode();
            if (status != 200) {
                Thread.sleep(100);
            }
        }
        assertEquals(200, status, "after the first stream ended, alice may generate again");
    }
}
