package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.NodeScripts;
import ml.juno.e2e.harness.RandomLora;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The web console at {@code /} in headless Chromium (Debian's, driven by playwright-core): it loads with no
 * request leaving the server, sends a message, shows the answer while it streams, and reports tokens/s; the whole
 * flow (settings, Stop, Regenerate, Copy, reload, markdown and its sanitizing, JSON mode alone and with a schema whose
 * answer must parse and follow it, favicon, a narrow screen)
 * runs in {@code js/console-flow.mjs}, which leaves its screenshots in {@code target/console-screenshots}.
 */
class WebConsoleIT {

    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        NodeScripts.install(true);
        server = LocalServer.get();
    }

    @Test
    void console_streamsAnAnswerInHeadlessChromium() throws Exception {
        Path profile = Files.createTempDirectory("juno-chromium-");
        try {
            NodeScripts.Result r = NodeScripts.run("console-check.mjs", Duration.ofMinutes(2), server.url("/").toString(), profile.toString());
            System.out.println(r.checks());
            assertEquals(0, r.exitCode(), r.output() + "\nserver log:\n" + server.log());
            assertTrue(r.checks().stream().anyMatch(l -> l.startsWith("ok console")), r.output());
            assertTrue(r.output().contains("running=true"), "text appeared while the answer was still streaming: " + r.output());
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void console_wholeFlow_settingsStopRegenerateReloadMarkdownJsonMode() throws Exception {
        String jsonMode = jsonModeOfTheServer();
        assertTrue(jsonMode.equals("parses") || jsonMode.equals("cut"), "response_format json_object constrains the answer: " + jsonMode);
        Path shots = Path.of("target", "console-screenshots").toAbsolutePath();
        Path profile = Files.createTempDirectory("juno-chromium-");
        try {
            NodeScripts.Result r = NodeScripts.run("console-flow.mjs", Duration.ofMinutes(2), server.url("/").toString(), profile.toString(),
                    shots.toString(), jsonMode);
            System.out.println(r.checks() + " (the server's response_format json_object: " + jsonMode + ")");
            assertEquals(0, r.exitCode(), r.output() + "\nserver log:\n" + server.log());
            assertTrue(r.checks().stream().anyMatch(l -> l.startsWith("ok console-flow")), r.output());
            assertTrue(r.output().contains("json-mode=" + jsonMode), r.output());
            assertTrue(r.output().contains("json-schema={"), "the JSON-schema answer parsed: " + r.output());
            for (String shot : List.of("1-answer.png", "2-stopped.png", "3-markdown.png", "4-json-mode.png", "4b-json-schema.png", "5-narrow.png")) {
                assertTrue(Files.size(shots.resolve(shot)) > 1000, shot + " written");
            }
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void console_modelPicker_listsAndSendsANamedLoraAdapter() throws Exception {
        Path root = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
        Path model = Path.of(System.getProperty("juno.models.dir", root.resolve("models").toString()), "stories260K.gguf").toAbsolutePath();
        Path adapter = Files.createTempFile("juno-console-", ".lora");
        Path profile = Files.createTempDirectory("juno-chromium-");
        try {
            RandomLora.write(adapter, model, 5);
            try (AppLauncher withAdapter = LocalServer.start(model, "-Xmx128m", "--lora-modules", "tuned=" + adapter)) {
                NodeScripts.Result r = NodeScripts.run("console-model.mjs", Duration.ofMinutes(1), withAdapter.url("/").toString(), profile.toString(),
                        "tuned", LocalServer.MODEL_ID);
                System.out.println(r.checks());
                assertEquals(0, r.exitCode(), r.output() + "\nserver log:\n" + withAdapter.log());
                assertTrue(r.checks().stream().anyMatch(l -> l.startsWith("ok console-model")), r.output());
            }
        } finally {
            Files.deleteIfExists(adapter);
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * What the server does with {@code response_format: {"type": "json_object"}} for the request the console's JSON
     * mode step sends (greedy, so the console's streamed answer is the same): "refused" (400), "parses" (the answer is
     * JSON), "cut" (max_tokens ended it inside the object: what came back is a valid start of JSON, finish_reason length;
     * the bundled model writes its story into one long string) or "ignored" (plain text came back). The console must show
     * the same thing.
     */
    private static String jsonModeOfTheServer() throws IOException, InterruptedException {
        String body = """
                {"messages":[{"role":"system","content":"You tell short stories."},{"role":"user","content":"Describe a cat as a JSON object"}],
                 "max_tokens":400,"temperature":0,"top_p":0.9,"top_k":40,"seed":7,"response_format":{"type":"json_object"}}""";
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(server.url("/v1/chat/completions"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 400) {
            return "refused";
        }
        assertEquals(200, r.statusCode(), r.body());
        ObjectMapper json = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        JsonNode choice = json.readTree(r.body()).path("choices").path(0);
        String content = choice.path("message").path("content").asText();
        try {
            JsonNode parsed = json.readTree(content);
            return parsed != null && !parsed.isMissingNode() ? "parses" : "ignored";
        } catch (IOException e) {
            return "length".equals(choice.path("finish_reason").asText()) && isJsonStart(json, content) ? "cut" : "ignored";
        }
    }

    /** Whether {@code text} is the beginning of a JSON object: it reads without error up to an early end. */
    private static boolean isJsonStart(ObjectMapper json, String text) {
        text = text.strip();
        if (!text.startsWith("{")) {
            return false;
        }
        try (com.fasterxml.jackson.core.JsonParser p = json.getFactory().createParser(text)) {
            while (p.nextToken() != null) {
                // read on to the end of the text
            }
            return false; // complete, so not cut
        } catch (com.fasterxml.jackson.core.io.JsonEOFException early) {
            return true;
        } catch (IOException invalid) {
            return false;
        }
    }

    @Test
    void healthDashboard_showsTheServersStateInHeadlessChromium() throws Exception {
        Path profile = Files.createTempDirectory("juno-chromium-");
        try {
            NodeScripts.Result r = NodeScripts.run("health-check.mjs", Duration.ofMinutes(2), server.url("/").toString(), profile.toString(), "0");
            assertEquals(0, r.exitCode(), r.output() + "\nserver log:\n" + server.log());
            assertTrue(r.checks().stream().anyMatch(l -> l.startsWith("ok health-ui")), r.output());
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
