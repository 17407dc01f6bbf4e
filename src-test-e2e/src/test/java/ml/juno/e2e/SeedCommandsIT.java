package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.JunoCli;
import ml.juno.e2e.harness.RandomLora;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every seed command line in {@code docs/seed-commands.md}, as written, through the packaged CLI: a server command
 * must start, answer one chat request over HTTP and stop with all its processes when told to; any other command must
 * exit 0. The lines run in the order of the document (the last one reads the JFR recordings an earlier one wrote).
 */
class SeedCommandsIT {
    static final Path ROOT = JunoCli.ROOT;
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", "../models")).toAbsolutePath().normalize();
    static final Path MODEL = MODELS.resolve("stories260K.gguf");
    static final ObjectMapper JSON = new ObjectMapper();

    static Path work;
    static Path adapter;

    @BeforeAll
    static void prepare() throws Exception {
        work = ROOT.resolve("src-test-e2e/target/seed-commands");
        if (Files.exists(work)) {
            try (Stream<Path> old = Files.walk(work)) {
                for (Path p : old.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        Files.createDirectories(work);
        // the nodes open files only under the model's folder, so the adapter lives there too
        adapter = Files.createTempFile(MODELS, ".seed-", ".lora");
        RandomLora.write(adapter, MODEL, 21);
    }

    @AfterAll
    static void cleanUp() throws IOException {
        if (adapter != null) {
            Files.deleteIfExists(adapter);
        }
    }

    /** The lines of the {@code seed} block, each split as a POSIX shell splits it (double quotes only). */
    static List<List<String>> seedLines() throws IOException {
        String doc = Files.readString(ROOT.resolve("docs/seed-commands.md"));
        int start = doc.indexOf("```seed\n");
        assertTrue(start >= 0, "docs/seed-commands.md has a ```seed block");
        int end = doc.indexOf("```", start + 8);
        List<List<String>> out = new ArrayList<>();
        for (String line : doc.substring(start + 8, end).split("\n")) {
            if (!line.isBlank()) {
                out.add(words(line.strip()));
            }
        }
        return out;
    }

    static List<String> words(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        boolean quoted = false;
        boolean any = false;
        for (char c : line.toCharArray()) {
            if (c == '"') {
                quoted = !quoted;
                any = true;
            } else if (c == ' ' && !quoted) {
                if (any) {
                    out.add(w.toString());
                }
                w.setLength(0);
                any = false;
            } else {
                w.append(c);
                any = true;
            }
        }
        if (any) {
            out.add(w.toString());
        }
        return out;
    }

    @TestFactory
    List<DynamicTest> everySeedCommand_runsAsWritten() throws IOException {
        List<List<String>> lines = seedLines();
        assertTrue(lines.size() >= 10, "the seed block lists the manual's commands: " + lines);
        List<DynamicTest> tests = new ArrayList<>();
        for (List<String> line : lines) {
            assertEquals("./juno", line.get(0), "each seed line starts with ./juno: " + line);
            tests.add(DynamicTest.dynamicTest(String.join(" ", line), () -> run(line.subList(1, line.size()))));
        }
        return tests;
    }

    static boolean serves(List<String> args) {
        return args.isEmpty() || args.get(0).startsWith("-") || args.get(0).equals("local") || args.get(0).equals("cluster");
    }

    static void run(List<String> written) throws Exception {
        int port = AppLauncher.freePort();
        List<String> args = new ArrayList<>();
        for (int i = 0; i < written.size(); i++) {
            String a = written.get(i);
            if (a.equals("M")) {
                args.add(MODEL.toString());
            } else if (a.equals("A.lora")) {
                args.add(adapter.toString());
            } else if (a.equals("8080") && i > 0 && written.get(i - 1).equals("--api-port")) {
                args.add(Integer.toString(port));
            } else if (a.contains("*")) {
                args.addAll(glob(a));
            } else {
                args.add(a);
            }
        }
        if (serves(args)) {
            serve(args, port);
        } else {
            Shell.Result r = Shell.run(JunoCli.command(args.toArray(String[]::new)), work, Map.of(), Duration.ofMinutes(3));
            assertEquals(0, r.exitCode(), r.describe());
            assertFalse(r.out().isBlank(), "it printed its result: " + r.describe());
        }
    }

    /** The files of the working folder that match a {@code *} pattern, in name order; at least one. */
    static List<String> glob(String pattern) throws IOException {
        var matcher = work.getFileSystem().getPathMatcher("glob:" + pattern);
        try (Stream<Path> files = Files.list(work)) {
            List<String> out = files.filter(p -> matcher.matches(p.getFileName())).map(p -> p.getFileName().toString()).sorted().toList();
            assertFalse(out.isEmpty(), "an earlier seed command wrote files matching " + pattern + " in " + work);
            return out;
        }
    }

    /** Starts a server command (the old port variable, {@code API_PORT}, when the line names no port), chats once, stops it. */
    static void serve(List<String> args, int port) throws Exception {
        Path log = work.resolve("serve-" + port + ".out");
        ProcessBuilder pb = new ProcessBuilder(JunoCli.command(args.toArray(String[]::new))).directory(work.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
        if (!args.contains("--api-port")) {
            pb.environment().put("API_PORT", Integer.toString(port));
        }
        pb.environment().remove("JUNO_API_PORT");
        Process p = pb.start();
        p.getOutputStream().close(); // no terminal: no chat prompt
        List<ProcessHandle> family = new ArrayList<>();
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
            boolean ready = false;
            while (!ready && System.nanoTime() < deadline && p.isAlive()) {
                try {
                    HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/models"))
                            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
                    ready = r.statusCode() == 200 && r.body().contains("stories260K");
                } catch (IOException notYet) {
                    // not listening yet
                }
                if (!ready) {
                    Thread.sleep(500);
                }
            }
            if (!ready) {
                fail("not serving on port " + port + " (alive: " + p.isAlive() + "):\n" + Files.readString(log));
            }
            String body = "{\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a time\"}],\"max_tokens\":8,\"temperature\":0}";
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
                    .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                    .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            JsonNode answer = JSON.readTree(r.body());
            assertTrue(answer.path("choices").path(0).path("message").path("content").isTextual(), r.body());
            assertTrue(answer.path("usage").path("completion_tokens").asInt() > 0, r.body());
            family.addAll(p.descendants().toList());
        } finally {
            p.destroy(); // SIGTERM, as Ctrl-C or systemd would stop it
            if (!p.waitFor(90, TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
                fail("did not stop within 90 s of SIGTERM:\n" + Files.readString(log));
            }
        }
        for (ProcessHandle h : family) {
            h.onExit().get(30, TimeUnit.SECONDS); // every node and coordinator it started is gone too
        }
        String out = Files.readString(log);
        if (args.contains("--jfr")) {
            try (Stream<Path> files = Files.list(work)) {
                List<String> names = files.map(f -> f.getFileName().toString()).toList();
                assertTrue(names.stream().anyMatch(n -> n.matches("juno-stories260K-\\d{8}-\\d{6}\\.jfr")), names.toString());
                assertTrue(names.stream().anyMatch(n -> n.matches("juno-node-0-stories260K-\\d{8}-\\d{6}\\.jfr")), names.toString());
            }
        }
        if (args.contains("--verbose")) {
            assertTrue(out.contains("TRACE"), "--verbose puts the engine's trace on the terminal:\n" + out);
        }
    }
}
