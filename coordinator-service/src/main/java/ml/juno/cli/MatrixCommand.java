package ml.juno.cli;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code juno matrix}: the performance matrix of the old product. Runs a grid of scenarios (local / pipeline / tensor ×
 * node counts × activation dtype × concurrency × prompt and generation lengths, repeated) against real processes it
 * starts, and writes {@code matrix.tsv} (one row per run), {@code matrix.json} (every run and the median of each
 * configuration, the input of {@code --compare}) and {@code report.html} (self-contained: tables and uPlot charts of
 * tokens/s, time to first token and latency percentiles).
 */
@Command(name = "matrix", mixinStandardHelpOptions = true,
        description = {"Run a grid of scenarios against real processes; write matrix.tsv, matrix.json and an HTML report.",
                "With --compare OLD.json NEW.json: the ratios of two runs' medians instead."})
final class MatrixCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--scenarios", paramLabel = "FILE", description = "The grid, in YAML (see docs/operations.md).")
    Path scenarios;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "juno-matrix", description = "Where the results go (default: ${DEFAULT-VALUE}).")
    Path out;

    @Option(names = "--compare", arity = "2", paramLabel = "JSON", description = "Compare two runs' matrix.json (old, new).")
    List<Path> compare;

    @Option(names = "--start-timeout", defaultValue = "180", description = "Seconds a server may take to become ready (default: ${DEFAULT-VALUE}).")
    int startTimeout;

    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    /** The file {@code --scenarios} names. */
    record Grid(String model, Integer repetitions, Integer threads, List<Scenario> scenarios) {
    }

    /** One block of the grid; every list is a dimension. */
    record Scenario(String name, String mode, List<Integer> nodes, List<String> dtype, List<Integer> concurrency,
                    @JsonProperty("prompt_tokens") List<Integer> promptTokens, @JsonProperty("gen_tokens") List<Integer> genTokens) {
    }

    /** One timed run of one configuration. */
    record Run(String scenario, String mode, int nodes, String dtype, int concurrency, int promptTokens, int genTokens, int repetition,
               int requests, int errors, long completionTokens, double seconds, double tokensPerSecond, double ttftP50Ms,
               double ttftP99Ms, double itlP50Ms, double itlP99Ms, double latencyP50Ms, double latencyP99Ms) {

        String config() {
            return mode + (mode.equals("local") ? "" : " x" + nodes + " " + dtype) + " c" + concurrency + " p" + promptTokens + " g" + genTokens;
        }
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter w = spec.commandLine().getOut();
        if (compare != null) {
            return compare(compare.get(0), compare.get(1), w);
        }
        if (scenarios == null) {
            throw new CliException("--scenarios FILE is required (or --compare OLD.json NEW.json)");
        }
        Grid s = readGrid(scenarios);
        Path model = (s.model() != null ? Path.of(s.model()) : JunoHome.detect().bundledModel()).toAbsolutePath();
        if (!Files.isRegularFile(model)) {
            throw new CliException("model file not found: " + model);
        }
        int reps = s.repetitions() != null ? s.repetitions() : 1;
        Files.createDirectories(out.resolve("logs"));
        int[] stops = stopIds(model);
        List<Run> runs = new ArrayList<>();
        for (Scenario sc : s.scenarios()) {
            for (int nodes : sc.mode().equals("local") ? List.of(1) : sc.nodes()) {
                for (String dtype : sc.mode().equals("local") ? List.of("-") : sc.dtype()) {
                    String tag = sc.name() + "-" + sc.mode() + (sc.mode().equals("local") ? "" : "-" + nodes + "-" + dtype);
                    w.println("matrix: starting " + tag);
                    w.flush();
                    try (Server server = Server.start(this, model, sc.mode(), nodes, dtype, s.threads(), out.resolve("logs").resolve(tag + ".log"))) {
                        Load load = new Load(server.port, stops);
                        load.level(1, 4, 4); // warm-up, not recorded
                        for (int c : sc.concurrency()) {
                            for (int p : sc.promptTokens()) {
                                for (int g : sc.genTokens()) {
                                    for (int r = 1; r <= reps; r++) {
                                        Run run = load.level(c, p, g).as(sc.name(), sc.mode(), nodes, dtype, c, p, g, r);
                                        runs.add(run);
                                        w.printf(Locale.ROOT, "  %-40s rep %d: %8.1f tok/s  TTFT p50 %7.1f ms  p99 %7.1f ms  errors %d%n", run.config(), r,
                                                run.tokensPerSecond(), run.ttftP50Ms(), run.ttftP99Ms(), run.errors());
                                        w.flush();
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        write(runs);
        w.println("matrix: " + runs.size() + " runs; wrote " + out.resolve("matrix.tsv") + ", " + out.resolve("matrix.json") + ", "
                + out.resolve("report.html"));
        return runs.stream().anyMatch(r -> r.errors() > 0) ? 1 : 0;
    }

    static Grid readGrid(Path file) throws IOException {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory()).configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);
        Grid s;
        try {
            s = yaml.readValue(file.toFile(), Grid.class);
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new CliException(file + ": " + e.getOriginalMessage());
        }
        if (s == null || s.scenarios() == null || s.scenarios().isEmpty()) {
            throw new CliException(file + ": no scenarios");
        }
        if (s.repetitions() != null && s.repetitions() < 1) {
            throw new CliException(file + ": repetitions must be >= 1");
        }
        for (Scenario sc : s.scenarios()) {
            String where = file + ": scenario '" + sc.name() + "': ";
            if (sc.name() == null || !sc.name().matches("[A-Za-z0-9._-]{1,40}")) {
                throw new CliException(file + ": every scenario needs a name of [A-Za-z0-9._-]");
            }
            if (!List.of("local", "pipeline", "tensor").contains(sc.mode())) {
                throw new CliException(where + "mode must be local, pipeline or tensor, got " + sc.mode());
            }
            if (!sc.mode().equals("local") && (empty(sc.nodes()) || empty(sc.dtype()))) {
                throw new CliException(where + "a cluster mode needs nodes and dtype lists");
            }
            if (empty(sc.concurrency()) || empty(sc.promptTokens()) || empty(sc.genTokens())) {
                throw new CliException(where + "concurrency, prompt_tokens and gen_tokens are required lists");
            }
            for (List<Integer> l : List.of(sc.concurrency(), sc.promptTokens(), sc.genTokens(), sc.nodes() == null ? List.<Integer>of() : sc.nodes())) {
                if (l.stream().anyMatch(v -> v == null || v < 1 || v > 4096)) {
                    throw new CliException(where + "counts must be in 1..4096");
                }
            }
        }
        return s;
    }

    private static boolean empty(List<?> l) {
        return l == null || l.isEmpty();
    }

    /** The model's end-of-generation ids: banned in the runs (logit bias), so every request generates its length. */
    private static int[] stopIds(Path model) throws IOException {
        try (GgufFile f = GgufFile.open(model)) {
            return Stream.of(GgufKeys.TOKENIZER_EOS_ID, GgufKeys.TOKENIZER_EOT_ID).filter(f.metadata()::has)
                    .mapToInt(k -> f.metadata().getInt(k)).filter(id -> id >= 0).distinct().toArray();
        }
    }

    // ---- servers -----------------------------------------------------------------------------------------------------

    /** A {@code juno local} or {@code juno cluster} child process on a free port. */
    private static final class Server implements AutoCloseable {
        final Process process;
        final int port;

        private Server(Process process, int port) {
            this.process = process;
            this.port = port;
        }

        static Server start(MatrixCommand m, Path model, String mode, int nodes, String dtype, Integer threads, Path log)
                throws IOException, InterruptedException {
            int port = LoopbackPorts.pick();
            List<String> cmd = new ArrayList<>();
            if (mode.equals("local")) {
                cmd.addAll(List.of("local", "--model-path", model.toString(), "--api-port", Integer.toString(port), "--no-chat"));
                if (threads != null) {
                    cmd.addAll(List.of("--threads", threads.toString()));
                }
            } else {
                Path logs = log.resolveSibling(log.getFileName().toString().replace(".log", ""));
                cmd.addAll(List.of("cluster", "--model-path", model.toString(), "--nodes", Integer.toString(nodes), "--pType", mode,
                        "--dtype", dtype, "--api-port", Integer.toString(port), "--no-chat", "--log-dir", logs.toString(), "--log-dir-is-run"));
                if (threads != null) {
                    cmd.addAll(List.of("--threads-per-node", threads.toString()));
                }
            }
            Process p = new ProcessBuilder(AppProcess.junoCommand(cmd)).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
            Server s = new Server(p, port);
            if (!AppProcess.awaitReady(p, port, Duration.ofSeconds(m.startTimeout))) {
                s.close();
                throw new CliException("the " + mode + " server did not become ready; see " + log);
            }
            return s;
        }

        @Override
        public void close() {
            List<ProcessHandle> all = new ArrayList<>(process.descendants().toList());
            process.destroy();
            try {
                if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
            all.forEach(ProcessHandle::destroyForcibly);
        }
    }

    // ---- load --------------------------------------------------------------------------------------------------------

    /** N concurrent streaming completions of P prompt / G generated tokens, measured from the client's side. */
    private static final class Load {
        private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        private final URI url;
        private final int[] stops;

        Load(int port, int[] stops) {
            this.url = URI.create("http://127.0.0.1:" + port + "/v1/completions");
            this.stops = stops;
        }

        record One(boolean ok, long tokens, double ttftMs, double latencyMs, double[] gapsMs) {
        }

        record Level(List<One> all, double seconds) {
            Run as(String scenario, String mode, int nodes, String dtype, int c, int p, int g, int rep) {
                List<One> ok = all.stream().filter(One::ok).toList();
                long tokens = ok.stream().mapToLong(One::tokens).sum();
                double[] ttft = ok.stream().mapToDouble(One::ttftMs).sorted().toArray();
                double[] lat = ok.stream().mapToDouble(One::latencyMs).sorted().toArray();
                double[] gaps = ok.stream().flatMapToDouble(o -> Arrays.stream(o.gapsMs())).sorted().toArray();
                return new Run(scenario, mode, nodes, dtype, c, p, g, rep, all.size(), all.size() - ok.size(), tokens, seconds,
                        seconds > 0 ? tokens / seconds : 0, pct(ttft, 50), pct(ttft, 99), pct(gaps, 50), pct(gaps, 99), pct(lat, 50), pct(lat, 99));
            }
        }

        Level level(int concurrency, int prompt, int gen) throws Exception {
            String body = body(prompt, gen);
            long t0 = System.nanoTime();
            try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
                List<Future<One>> fs = new ArrayList<>();
                for (int i = 0; i < concurrency; i++) {
                    fs.add(pool.submit(() -> one(body)));
                }
                List<One> all = new ArrayList<>();
                for (Future<One> f : fs) {
                    all.add(f.get());
                }
                return new Level(all, (System.nanoTime() - t0) / 1e9);
            }
        }

        private String body(int prompt, int gen) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("prompt", "a" + " a".repeat(Math.max(0, prompt - 2))); // about one token a word, with BOS: the asked length
            b.put("max_tokens", gen);
            b.put("temperature", 0);
            b.put("stream", true);
            b.put("stream_options", Map.of("include_usage", true));
            Map<String, Integer> bias = new LinkedHashMap<>();
            for (int id : stops) {
                bias.put(Integer.toString(id), -100);
            }
            if (!bias.isEmpty()) {
                b.put("logit_bias", bias);
            }
            try {
                return JSON.writeValueAsString(b);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }

        private One one(String body) {
            long t0 = System.nanoTime();
            List<Double> gaps = new ArrayList<>();
            long first = 0;
            long last = 0;
            long tokens = 0;
            try {
                HttpResponse<Stream<String>> r = http.send(HttpRequest.newBuilder(url).header("Content-Type", "application/json")
                        .timeout(Duration.ofMinutes(10)).POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofLines());
                if (r.statusCode() != 200) {
                    r.body().close();
                    return new One(false, 0, 0, 0, new double[0]);
                }
                boolean failed = false;
                try (Stream<String> lines = r.body()) {
                    for (String line : (Iterable<String>) lines::iterator) {
                        if (!line.startsWith("data: {")) {
                            continue;
                        }
                        JsonNode chunk = JSON.readTree(line.substring(6));
                        if (chunk.has("error")) {
                            failed = true;
                            continue;
                        }
                        JsonNode usage = chunk.get("usage");
                        if (usage != null && !usage.isNull()) {
                            tokens = usage.path("completion_tokens").asLong();
                        }
                        JsonNode choices = chunk.path("choices");
                        if (!choices.isEmpty() && !choices.get(0).path("text").asText("").isEmpty()) {
                            long now = System.nanoTime();
                            if (first == 0) {
                                first = now;
                            } else {
                                gaps.add((now - last) / 1e6);
                            }
                            last = now;
                        }
                    }
                }
                long end = System.nanoTime();
                return new One(!failed, tokens, first == 0 ? 0 : (first - t0) / 1e6, (end - t0) / 1e6,
                        gaps.stream().mapToDouble(Double::doubleValue).toArray());
            } catch (IOException | RuntimeException e) {
                return new One(false, 0, 0, 0, new double[0]);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new One(false, 0, 0, 0, new double[0]);
            }
        }

        private static double pct(double[] sorted, double p) {
            if (sorted.length == 0) {
                return 0;
            }
            int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
        }
    }

    // ---- results -----------------------------------------------------------------------------------------------------

    /** Medians over the repetitions of each configuration, in run order. */
    static List<Run> medians(List<Run> runs) {
        Map<String, List<Run>> by = new LinkedHashMap<>();
        for (Run r : runs) {
            by.computeIfAbsent(r.scenario() + "|" + r.config(), k -> new ArrayList<>()).add(r);
        }
        List<Run> out = new ArrayList<>();
        for (List<Run> rs : by.values()) {
            Run a = rs.get(0);
            out.add(new Run(a.scenario(), a.mode(), a.nodes(), a.dtype(), a.concurrency(), a.promptTokens(), a.genTokens(), 0,
                    rs.stream().mapToInt(Run::requests).sum(), rs.stream().mapToInt(Run::errors).sum(),
                    rs.stream().mapToLong(Run::completionTokens).sum(), median(rs, Run::seconds), median(rs, Run::tokensPerSecond),
                    median(rs, Run::ttftP50Ms), median(rs, Run::ttftP99Ms), median(rs, Run::itlP50Ms), median(rs, Run::itlP99Ms),
                    median(rs, Run::latencyP50Ms), median(rs, Run::latencyP99Ms)));
        }
        return out;
    }

    private static double median(List<Run> rs, java.util.function.ToDoubleFunction<Run> f) {
        double[] v = rs.stream().mapToDouble(f).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private void write(List<Run> runs) throws IOException {
        StringBuilder tsv = new StringBuilder("scenario\tmode\tnodes\tdtype\tconcurrency\tprompt_tokens\tgen_tokens\trepetition\trequests\terrors"
                + "\tcompletion_tokens\tseconds\ttokens_per_s\tttft_p50_ms\tttft_p99_ms\titl_p50_ms\titl_p99_ms\tlatency_p50_ms\tlatency_p99_ms\n");
        for (Run r : runs) {
            tsv.append(String.format(Locale.ROOT, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.3f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f%n",
                    r.scenario(), r.mode(), r.nodes(), r.dtype(), r.concurrency(), r.promptTokens(), r.genTokens(), r.repetition(), r.requests(),
                    r.errors(), r.completionTokens(), r.seconds(), r.tokensPerSecond(), r.ttftP50Ms(), r.ttftP99Ms(), r.itlP50Ms(), r.itlP99Ms(),
                    r.latencyP50Ms(), r.latencyP99Ms()));
        }
        Files.writeString(out.resolve("matrix.tsv"), tsv);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("juno", ml.juno.engine.EngineInfo.VERSION);
        json.put("cpu", ml.juno.engine.EngineInfo.cpuBackendName());
        json.put("runs", runs);
        json.put("medians", medians(runs));
        Files.writeString(out.resolve("matrix.json"), JSON.writeValueAsString(json));
        Files.writeString(out.resolve("report.html"), html(medians(runs)));
    }

    private static String html(List<Run> medians) throws IOException {
        String uplotJs = webjar("dist/uPlot.iife.min.js");
        String uplotCss = webjar("dist/uPlot.min.css");
        StringBuilder rows = new StringBuilder();
        for (Run r : medians) {
            rows.append(String.format(Locale.ROOT, "<tr><td>%s</td><td>%s</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%.1f</td><td>%d</td></tr>%n",
                    esc(r.scenario()), esc(r.config()), r.tokensPerSecond(), r.ttftP50Ms(), r.ttftP99Ms(), r.itlP50Ms(), r.itlP99Ms(),
                    r.latencyP50Ms(), r.latencyP99Ms(), r.errors()));
        }
        String data = JSON.writeValueAsString(medians).replace("</", "<\\/");
        return """
                <!doctype html>
                <html lang="en"><head><meta charset="utf-8"><title>Juno performance matrix</title>
                <style>%s</style>
                <style>body{font:14px system-ui,sans-serif;margin:1.5em;color:#1d232b} table{border-collapse:collapse}
                td,th{padding:.3em .7em;border-bottom:1px solid #ddd;text-align:right} td:nth-child(-n+2),th:nth-child(-n+2){text-align:left}
                .chart{margin:1em 0}</style></head><body>
                <h1>Juno performance matrix</h1>
                <p>Medians over the repetitions of each configuration (tokens/s: completion tokens of all concurrent requests over the level's wall time).</p>
                <div id="tps" class="chart"></div><div id="ttft" class="chart"></div><div id="lat" class="chart"></div>
                <table><thead><tr><th>scenario</th><th>configuration</th><th>tok/s</th><th>TTFT p50 ms</th><th>TTFT p99 ms</th><th>ITL p50 ms</th>
                <th>ITL p99 ms</th><th>latency p50 ms</th><th>latency p99 ms</th><th>errors</th></tr></thead><tbody>
                %s</tbody></table>
                <script>%s</script>
                <script id="matrix-data" type="application/json">%s</script>
                <script>
                const runs = JSON.parse(document.getElementById('matrix-data').textContent);
                const x = runs.map((_, i) => i);
                const label = (u, v) => v.map(i => Number.isInteger(i) && runs[i] ? String(i + 1) : '');
                function chart(id, title, series) {
                  new uPlot({ title, width: 900, height: 260, scales: { x: { time: false } },
                    axes: [{ values: label, label: 'configuration (row of the table)' }, {}],
                    series: [{}].concat(series.map(([name, stroke]) => ({ label: name, stroke, width: 2, points: { show: true } }))) },
                    [x].concat(series.map(([, , f]) => runs.map(f))), document.getElementById(id));
                }
                chart('tps', 'tokens/s', [['tok/s', '#2f6fd6', r => r.tokensPerSecond]]);
                chart('ttft', 'time to first token (ms)', [['p50', '#1c7c3a', r => r.ttftP50Ms], ['p99', '#b3261e', r => r.ttftP99Ms]]);
                chart('lat', 'request latency (ms)', [['p50', '#1c7c3a', r => r.latencyP50Ms], ['p99', '#b3261e', r => r.latencyP99Ms]]);
                </script></body></html>
                """.formatted(uplotCss, rows, uplotJs, data);
    }

    /** A file of the uPlot webjar on our class path, to inline into the report (it must open without the network). */
    private static String webjar(String file) throws IOException {
        String path = "/META-INF/resources/webjars/uplot/" + uplotVersion() + "/" + file;
        try (InputStream in = MatrixCommand.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IOException("the report's chart library is missing from the class path: " + path);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("</script", "<\\/script");
        }
    }

    private static String uplotVersion() throws IOException {
        try (InputStream in = MatrixCommand.class.getResourceAsStream("/META-INF/maven/org.webjars.npm/uplot/pom.properties")) {
            if (in == null) {
                throw new IOException("the uPlot webjar is missing from the class path");
            }
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version");
        }
    }

    private static String esc(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    /** {@code --compare}: tokens/s and TTFT of each configuration both runs have, new over old. */
    private static int compare(Path oldFile, Path newFile, PrintWriter w) throws IOException {
        Map<String, JsonNode> before = byConfig(oldFile);
        Map<String, JsonNode> after = byConfig(newFile);
        w.printf(Locale.ROOT, "%-50s %10s %10s %8s %12s %12s %8s%n", "configuration", "tok/s old", "tok/s new", "ratio", "TTFT50 old", "TTFT50 new", "ratio");
        int shared = 0;
        for (var e : after.entrySet()) {
            JsonNode o = before.get(e.getKey());
            if (o == null) {
                continue;
            }
            shared++;
            JsonNode n = e.getValue();
            double t0 = o.get("tokensPerSecond").asDouble();
            double t1 = n.get("tokensPerSecond").asDouble();
            double f0 = o.get("ttftP50Ms").asDouble();
            double f1 = n.get("ttftP50Ms").asDouble();
            w.printf(Locale.ROOT, "%-50s %10.1f %10.1f %8.3f %12.1f %12.1f %8.3f%n", e.getKey(), t0, t1, t0 > 0 ? t1 / t0 : 0, f0, f1, f0 > 0 ? f1 / f0 : 0);
        }
        if (shared == 0) {
            throw new CliException("the two runs have no configuration in common");
        }
        return 0;
    }

    private static Map<String, JsonNode> byConfig(Path file) throws IOException {
        JsonNode root;
        try {
            root = JSON.readTree(file.toFile());
        } catch (com.fasterxml.jackson.core.JacksonException e) {
            throw new CliException(file + " is not a matrix.json: " + e.getOriginalMessage());
        }
        if (root == null || !root.path("medians").isArray()) {
            throw new CliException(file + " is not a matrix.json (no medians)");
        }
        Map<String, JsonNode> m = new LinkedHashMap<>();
        for (JsonNode r : root.get("medians")) {
            String mode = r.get("mode").asText();
            String key = r.get("scenario").asText() + " " + mode + (mode.equals("local") ? "" : " x" + r.get("nodes").asInt() + " " + r.get("dtype").asText())
                    + " c" + r.get("concurrency").asInt() + " p" + r.get("promptTokens").asInt() + " g" + r.get("genTokens").asInt();
            m.put(key, r);
        }
        return m;
    }
}
