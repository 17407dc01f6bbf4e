package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.NodeScripts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code juno local --api-key-file F --rate-limit 20rpm} as a real process, driven by the official {@code openai} SDK
 * ({@code js/sdk-auth-check.mjs}): a good key works (blocking, streaming, models), a wrong key and no key are the SDK's
 * AuthenticationError, a key past its limit is a RateLimitError with Retry-After, and a key removed from the file is
 * refused on the next request. The web console asks for the key once and keeps it.
 */
class ApiKeysIT {

    static final String GOOD = "sk-e2e-good-0123456789";
    static final String BURST = "sk-e2e-burst-0123456789";
    static final String CONSOLE = "sk-e2e-console-0123456789";
    static Path keys;
    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        NodeScripts.install(true);
        keys = Files.createTempFile("juno-e2e-keys-", ".txt");
        Files.writeString(keys, "good:" + GOOD + "\nburst:" + BURST + "\nconsole:" + CONSOLE + "\n");
        Path model = Path.of(System.getProperty("juno.models.dir", "../models"), "stories260K.gguf").toAbsolutePath();
        server = LocalServer.start(model, "-Xmx128m", "--api-key-file", keys.toString(), "--rate-limit", "20rpm");
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.close();
        }
        Files.deleteIfExists(keys);
    }

    @Test
    void openAiSdk_withKeys_revocation_andRateLimit() throws Exception {
        String base = server.url("/v1").toString();
        NodeScripts.Result r = NodeScripts.run("sdk-auth-check.mjs", Duration.ofMinutes(2), base, LocalServer.MODEL_ID, GOOD,
                "sk-e2e-wrong-0123456789", BURST, "20");
        for (String name : List.of("key_chat_blocking", "key_chat_streaming", "key_models", "wrong_key_401", "no_key_401", "rate_limited_429")) {
            assertTrue(r.checks().contains("ok " + name), name + ":\n" + r.output() + "\nserver log:\n" + server.log());
        }
        assertEquals(0, r.exitCode(), r.output());

        Files.writeString(keys, "burst:" + BURST + "\nconsole:" + CONSOLE + "\n");
        Files.setLastModifiedTime(keys, FileTime.fromMillis(System.currentTimeMillis() + 5000));
        NodeScripts.Result revoked = NodeScripts.run("sdk-auth-check.mjs", Duration.ofMinutes(1), base, LocalServer.MODEL_ID, GOOD, "revoked");
        assertTrue(revoked.checks().containsAll(List.of("ok revoked_key_401", "ok revoked_key_models_401")), revoked.output());
        assertEquals(0, revoked.exitCode(), revoked.output());

        HttpClient http = HttpClient.newHttpClient();
        assertEquals(200, http.send(HttpRequest.newBuilder(server.url("/q/health/ready")).build(), HttpResponse.BodyHandlers.ofString())
                .statusCode(), "readiness stays open");
        assertEquals(401, http.send(HttpRequest.newBuilder(server.url("/q/metrics")).build(), HttpResponse.BodyHandlers.ofString())
                .statusCode(), "metrics need a key");
        String log = server.log();
        assertFalse(log.contains(GOOD) || log.contains(BURST), "keys never logged:\n" + log);
        assertTrue(log.contains("API keys required"), log);
        assertFalse(log.contains("no API keys are set"), "no warning on loopback with keys");
    }

    @Test
    void console_asksForTheKeyOnce_andStreams() throws Exception {
        Path profile = Files.createTempDirectory("juno-chromium-");
        try {
            NodeScripts.Result r = NodeScripts.run("console-check.mjs", Duration.ofMinutes(2), server.url("/").toString(), profile.toString(), CONSOLE);
            assertEquals(0, r.exitCode(), r.output() + "\nserver log:\n" + server.log());
            assertTrue(r.checks().stream().anyMatch(l -> l.startsWith("ok console")), r.output());
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
