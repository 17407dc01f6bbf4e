package ml.juno.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code juno test}: starts real clusters ({@code juno cluster} as a child process: node processes, a coordinator,
 * gRPC on loopback) for each parallelism, and checks them over the HTTP API: a coherent greedy answer, the same answer
 * again at temperature 0, a second chat turn served partly from the prefix cache, and FLOAT16 and INT8 activations
 * agreeing with FLOAT32. Prints one line per check and exits 0 only if every check passed.
 */
@Command(name = "test", mixinStandardHelpOptions = true,
        description = "Smoke checks against freshly started clusters (pipeline and tensor); exit 0 only if all pass.")
final class TestCommand implements Callable<Integer> {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROMPT = "Once upon a time, there was a little girl named Lily.";

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOption model = new ModelOption();

    @Mixin
    BackendOption backend = new BackendOption();

    @Mixin
    ExpertCacheOption expertCache = new ExpertCacheOption();

    @Option(names = "--nodes", defaultValue = "2", description = "Node processes per cluster (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--pType", split = ",", defaultValue = "pipeline,tensor",
            description = "Parallelisms to test, comma-separated (default: ${DEFAULT-VALUE}).")
    List<String> parallelisms;

    @Option(names = "--start-timeout", defaultValue = "180", description = "Seconds a cluster may take to become ready (default: ${DEFAULT-VALUE}).")
    int startTimeout;

    @Option(names = "--log-dir", defaultValue = "juno-logs",
            description = "Folder of the run logs: this run's go in a test-<time> folder there, linked as 'latest' (default: ${DEFAULT-VALUE}).")
    Path logDir;

    @Mixin
    JfrOptions jfr = new JfrOptions();

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final List<String> failures = new ArrayList<>();
    private PrintWriter out;

    @Override
    public Integer call() throws Exception {
        if (nodes < 1 || nodes > 16) {
            throw new CliException("--nodes must be in 1..16, got " + nodes);
        }
        for (String p : parallelisms) {
            if (!p.equals("pipeline") && !p.equals("tensor")) {
                throw new CliException("--pType takes pipeline and/or tensor, got '" + p + "'");
            }
        }
        out = spec.commandLine().getOut();
        Path modelPath = model.resolve().toAbsolutePath();
        backend.args(); // a bad JUNO_BACKEND is an error before any cluster starts
        expertCache.args();
        jfr.checkDuration(); // before any cluster starts
        logDir = RunLogs.create(logDir, "test");
        for (String p : parallelisms) {
            String reference;
            try (Cluster c = Cluster.start(this, modelPath, p, "FLOAT32")) {
                reference = checkBasics(c, p);
            }
            for (String dtype : List.of("FLOAT16", "INT8")) {
                try (Cluster c = Cluster.start(this, modelPath, p, dtype)) {
                    checkDtype(c, p, dtype, reference);
                }
            }
        }
        out.println(failures.isEmpty() ? "juno test: all checks passed" : "juno test: " + failures.size() + " check(s) failed: " + failures);
        if (jfr.enabled()) {
            try (var walk = Files.walk(logDir)) {
                List<Path> recordings = walk.filter(f -> f.toString().endsWith(".jfr") && Files.isRegularFile(f)).sorted().toList();
                if (recordings.isEmpty()) {
                    out.println("juno: no JFR recording was written");
                } else {
                    out.println("JFR summary of every cluster (as 'juno metrics'):");
                    MetricsCommand.print(ml.juno.coordinator.jfr.RecordingSummarizer.summarize(recordings), out);
                }
            }
        }
        out.flush();
        return failures.isEmpty() ? 0 : 1;
    }

    private void report(String name, boolean ok, String detail) {
        out.printf("%-6s %-48s %s%n", ok ? "PASS" : "FAIL", name, detail);
        out.flush();
        if (!ok) {
            failures.add(name);
        }
    }

    /** Greedy answer, determinism and the prefix cache on a FLOAT32 cluster; returns the greedy text. */
    private String checkBasics(Cluster c, String p) throws IOException, InterruptedException {
        String first = completion(c, PROMPT, 32);
        long letters = first.chars().filter(ch -> Character.isLetter(ch) || ch == ' ').count();
        boolean coherent = first.strip().length() >= 16 && letters >= 0.8 * first.length();
        report(p + " greedy answer", coherent, quote(first));
        String second = completion(c, PROMPT, 32);
        report(p + " deterministic at temperature 0", second.equals(first), second.equals(first) ? "same text twice" : "differs: " + quote(second));

        String turn1 = "Tell me a story about a brave little dog who lived in a big house with a garden full of flowers.";
        JsonNode r1 = chat(c, List.<String[]>of(new String[] {"user", turn1}));
        String answer = r1.path("choices").path(0).path("message").path("content").asText();
        JsonNode r2 = chat(c, List.<String[]>of(new String[] {"user", turn1}, new String[] {"assistant", answer},
                new String[] {"user", "What happened next?"}));
        int prompt2 = r2.path("usage").path("prompt_tokens").asInt();
        int cached = r2.path("usage").path("prompt_tokens_details").path("cached_tokens").asInt();
        String next = r2.path("choices").path(0).path("message").path("content").asText();
        report(p + " multi-turn chat reuses the prefix cache", cached > 0 && !next.isBlank(),
                cached + " of " + prompt2 + " prompt tokens of turn 2 came from the cache");
        return first;
    }

    private void checkDtype(Cluster c, String p, String dtype, String reference) throws IOException, InterruptedException {
        String text = completion(c, PROMPT, 32);
        int common = 0;
        while (common < Math.min(text.length(), reference.length()) && text.charAt(common) == reference.charAt(common)) {
            common++;
        }
        double agreement = reference.isEmpty() ? 0 : (double) common / reference.length();
        String detail = text.equals(reference) ? "greedy text identical to FLOAT32's"
                : String.format("greedy text agrees with FLOAT32 on its first %.0f%% (first difference at character %d)", 100 * agreement, common);
        report(p + " " + dtype + " activations", !text.isBlank() && agreement >= 0.5, detail);
    }

    private String completion(Cluster c, String prompt, int maxTokens) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", c.modelId);
        body.put("prompt", prompt);
        body.put("max_tokens", maxTokens);
        body.put("temperature", 0);
        return post(c, "/v1/completions", body).path("choices").path(0).path("text").asText();
    }

    private JsonNode chat(Cluster c, List<String[]> turns) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", c.modelId);
        body.put("max_tokens", 24);
        body.put("temperature", 0);
        ArrayNode messages = body.putArray("messages");
        for (String[] t : turns) {
            messages.addObject().put("role", t[0]).put("content", t[1]);
        }
        return post(c, "/v1/chat/completions", body);
    }

    private JsonNode post(Cluster c, String path, ObjectNode body) throws IOException, InterruptedException {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + c.port + path))
                .timeout(Duration.ofSeconds(120))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .build();
        HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException(path + " answered " + r.statusCode() + ": " + r.body());
        }
        return JSON.readTree(r.body());
    }

    /** The {@code juno cluster} child's command line; {@code --backend} goes on to it (and so to its nodes) when given. */
    List<String> clusterCommand(Path model, String parallelism, String dtype, int port, Path logs) {
        List<String> cmd = AppProcess.junoCommand(List.of("cluster",
                "--model-path", model.toString(), "--nodes", Integer.toString(nodes), "--pType", parallelism,
                "--dtype", dtype, "--api-port", Integer.toString(port), "--host", "127.0.0.1", "--log-dir", logs.toString(),
                "--log-dir-is-run"));
        cmd.addAll(backend.args());
        cmd.addAll(expertCache.args());
        if (jfr.enabled()) { // each cluster records into its log folder and prints its summary into cluster.log; we print them all
            cmd.addAll(List.of("--jfr", jfr.duration, "--jfr-dir", logs.toString()));
            if (jfr.matMul) {
                cmd.add("--jfr-matmul");
            }
        }
        return cmd;
    }

    private static String quote(String s) {
        String one = s.replace('\n', ' ');
        return "\"" + (one.length() > 70 ? one.substring(0, 70) + "…" : one) + "\"";
    }

    /** One {@code juno cluster} child process and everything it started; closing stops them all. */
    private static final class Cluster implements AutoCloseable {
        final Process process;
        final int port;
        String modelId = "";

        private Cluster(Process process, int port) {
            this.process = process;
            this.port = port;
        }

        static Cluster start(TestCommand t, Path model, String parallelism, String dtype) throws IOException, InterruptedException {
            int port = LoopbackPorts.pick();
            Path logs = t.logDir.resolve(parallelism + "-" + dtype.toLowerCase());
            Files.createDirectories(logs);
            List<String> cmd = t.clusterCommand(model, parallelism, dtype, port, logs);
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logs.resolve("cluster.log").toFile())).start();
            Cluster c = new Cluster(p, port);
            t.out.printf("...... starting a %d-node %s cluster with %s activations (logs in %s)%n", t.nodes, parallelism, dtype, logs);
            t.out.flush();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(t.startTimeout);
            while (true) {
                if (!p.isAlive()) {
                    throw new CliException("the " + parallelism + " cluster exited with " + p.exitValue() + " before it was ready; see " + logs
                            + tail(logs.resolve("cluster.log")) + tail(logs.resolve("coordinator.log")));
                }
                try {
                    HttpResponse<String> r = t.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/q/health/ready"))
                            .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
                    if (r.statusCode() == 200) {
                        HttpResponse<String> m = t.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/v1/models"))
                                .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
                        c.modelId = JSON.readTree(m.body()).path("data").path(0).path("id").asText();
                        for (JsonNode check : JSON.readTree(r.body()).path("checks")) {
                            if (check.path("name").asText().equals("model")) {
                                t.out.printf("...... ready; the nodes compute on backend %s (%s)%n", check.path("data").path("backend").asText("?"),
                                        check.path("data").path("isa").asText("?"));
                                t.out.flush();
                            }
                        }
                        return c;
                    }
                } catch (IOException notYet) {
                    // not listening yet
                }
                if (System.nanoTime() > deadline) {
                    c.close();
                    throw new CliException("the " + parallelism + " cluster was not ready within " + t.startTimeout + " s; see " + logs);
                }
                Thread.sleep(250);
            }
        }

        /** The last lines of a log, to print with an error (CI keeps the output, not always the files). */
        private static String tail(Path log) {
            try {
                List<String> lines = Files.readAllLines(log);
                return "\n--- last lines of " + log + "\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
            } catch (IOException | RuntimeException unreadable) {
                return "\n--- " + log + " is not readable: " + unreadable.getMessage();
            }
        }

        @Override
        public void close() {
            List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
            process.destroy(); // its shutdown hook stops the nodes and the coordinator
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
            for (ProcessHandle h : all) {
                h.destroyForcibly();
            }
        }
    }
}
