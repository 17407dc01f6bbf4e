package ml.juno.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.Callable;
import ml.juno.engine.EngineInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code juno cluster}: forks N node processes and a coordinator on loopback (real gRPC on real ports, one log file
 * per process), restarts a node that dies (the coordinator reloads its shard), and stops them all on Ctrl-C or when
 * the coordinator exits. Every child also watches this process and exits if it disappears.
 */
@Command(name = "cluster", mixinStandardHelpOptions = true,
        description = "Fork N node processes and a coordinator on loopback; the OpenAI API on --api-port.")
final class ClusterCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOption model = new ModelOption();

    @Mixin
    ClusterOptions cluster = new ClusterOptions();

    @Mixin
    JfrOptions jfr = new JfrOptions();

    @Mixin
    BackendOption backend = new BackendOption();

    @Mixin
    ExpertCacheOption expertCache = new ExpertCacheOption();

    @Mixin
    GenerationDefaults generation = new GenerationDefaults();

    @Mixin
    ApiAccessOptions access = new ApiAccessOptions();

    @Mixin
    VerboseOption verbose = new VerboseOption();

    @Mixin
    DrainOption drain = new DrainOption();

    @Option(names = "--nodes", defaultValue = "${env:JUNO_NODES:-3}", description = "Node processes to fork (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--api-port", defaultValue = "${env:JUNO_API_PORT:-${env:API_PORT:-8080}}", description = "HTTP port of the API and console (default: ${DEFAULT-VALUE}).")
    int apiPort;

    @Option(names = "--host", defaultValue = "${env:JUNO_HOST:-127.0.0.1}", description = "Address the API listens on (default: ${DEFAULT-VALUE}, loopback only; nodes always listen on 127.0.0.1).")
    String host;

    @Option(names = "--no-tls", description = "Plaintext between the coordinator and its nodes (default: mutual TLS with certificates made at each start in the run's log folder under tls/, or --tls-dir).")
    boolean noTls;

    @Option(names = "--log-dir", defaultValue = "juno-logs",
            description = "Folder of the run logs: each run writes node-N.log and coordinator.log in its own folder there, linked as 'latest' (default: ${DEFAULT-VALUE}).")
    Path logDir;

    /** Write the logs in --log-dir itself (juno test gives each cluster its folder). */
    @Option(names = "--log-dir-is-run", hidden = true)
    boolean logDirIsRun;

    @Option(names = "--chat", negatable = true, description = "Open the terminal chat beside the API (default: when run on a terminal).")
    Boolean chat;

    /** Set for the top-level command ({@code ./juno [cluster options]}): print the banner naming the served model. */
    boolean banner;

    private final List<Process> children = new ArrayList<>();
    private volatile boolean stopping;
    private volatile Process coordinatorProcess;
    private Path tlsDir;
    private boolean stopped;
    private final java.util.concurrent.CountDownLatch stoppedAll = new java.util.concurrent.CountDownLatch(1);

    @Override
    public Integer call() throws IOException {
        if (nodes < 1 || nodes > 64) {
            throw new CliException("--nodes must be in 1..64, got " + nodes);
        }
        if (apiPort < 1 || apiPort > 65535) {
            throw new CliException("--api-port must be in 1..65535, got " + apiPort);
        }
        Map<String, String> generationProps = generation.properties(); // bad flags first, before the model and the apps
        JunoHome home = JunoHome.detect();
        Path modelPath = model.resolve().toAbsolutePath();
        if (banner) {
            PrintWriter top = spec.commandLine().getOut();
            top.println("Juno " + EngineInfo.VERSION + " (" + EngineInfo.cpuBackendName() + ", Java " + Runtime.version() + ")");
            top.println("Serving " + home.display(modelPath) + " on http://localhost:" + apiPort + "/ from " + nodes
                    + " local node processes (" + cluster.parallelism + "; OpenAI API under /v1; 'juno --help' lists every command)");
            top.flush();
        }
        Path coordApp = JunoHome.requireApp(home.coordinatorApp());
        Path nodeApp = JunoHome.requireApp(home.nodeApp());
        // a bad JUNO_BACKEND or JUNO_EXPERT_CACHE is an error before anything starts; the nodes run the model
        Map<String, String> backendProps = new LinkedHashMap<>(backend.properties());
        backendProps.putAll(expertCache.properties());
        jfr.model(modelPath);
        if (logDirIsRun) {
            Files.createDirectories(logDir);
        } else {
            logDir = RunLogs.create(logDir, "cluster");
        }
        StringJoiner addresses = new StringJoiner(",");
        // the nodes' ports, then the API port: none picked twice (the coordinator binds the API port after the nodes start)
        int[] ports = new int[nodes + 1];
        ports[nodes] = apiPort;
        for (int i = 0; i < nodes; i++) {
            ports[i] = LoopbackPorts.pick(ports);
            addresses.add("127.0.0.1:" + ports[i]);
        }
        Map<String, String> coordProps = new LinkedHashMap<>();
        coordProps.put("juno.model-path", modelPath.toString());
        coordProps.put("quarkus.http.port", Integer.toString(apiPort));
        coordProps.put("quarkus.http.host", host);
        coordProps.putAll(cluster.properties(addresses.toString()));
        Path tls = cluster.tlsDir == null ? null : cluster.tlsDir.toAbsolutePath();
        if (tls == null && !noTls) {
            // fresh certificates for this run: only these nodes and this coordinator trust each other
            tls = logDir.resolve("tls").toAbsolutePath();
            ml.juno.coordinator.tls.ClusterCertificates.write(tls, nodes, List.of(), java.time.Duration.ofDays(30));
            coordProps.put("juno.cluster.tls-dir", tls.toString());
        }
        this.tlsDir = tls;
        coordProps.putAll(generationProps);
        coordProps.putAll(verbose.properties());
        coordProps.putAll(access.properties());
        coordProps.putAll(drain.properties());
        Map<String, String> coordEnv = access.environment();
        coordProps.put("juno.parent-pid", Long.toString(ProcessHandle.current().pid()));
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopAll, "juno-cluster-stopper"));
        for (int i = 0; i < nodes; i++) {
            superviseNode(nodeApp, i, ports[i], backendProps);
        }
        if (jfr.enabled()) {
            System.err.println("juno: recording JFR (" + jfr.duration + ") in every JVM: " + jfr.file("coordinator") + ", " + jfr.file("node-0") + ", …");
        }
        Process coordinator = start(coordApp, coordProps, logDir.resolve("coordinator.log"), jfr.jvmOptions("coordinator"), coordEnv);
        coordinatorProcess = coordinator;
        PrintWriter out = spec.commandLine().getOut();
        out.println("Cluster: " + nodes + " nodes (" + cluster.parallelism + ", " + cluster.dtype + ", " + cluster.byteOrder()
                + (tlsDir != null ? ", mutual TLS" : ", plaintext") + ") at " + addresses + "; API on http://"
                + (host.equals("0.0.0.0") ? "localhost" : host) + ":" + apiPort + "/ ; logs in " + logDir.toAbsolutePath());
        out.flush();
        try {
            if (chat != null ? chat : TerminalChat.onTerminal()) {
                if (!AppProcess.awaitReady(coordinator, apiPort, java.time.Duration.ofMinutes(5))) {
                    spec.commandLine().getErr().println("juno: the cluster did not become ready" + fatalLine(logDir.resolve("coordinator.log"))
                            + "; see " + logDir.resolve("coordinator.log"));
                    return 1;
                }
                java.net.URI base = java.net.URI.create("http://" + (host.equals("0.0.0.0") || host.equals("::") ? "127.0.0.1" : host) + ":" + apiPort);
                try (TerminalChat.Lines lines = TerminalChat.systemLines(Path.of(System.getProperty("user.home"), ".juno_history"))) {
                    new TerminalChat(base, null, access.chatKey(), null,
                        generation.maxTokens != null ? generation.maxTokens : TerminalChat.SERVER_CHAT_MAX_TOKENS, out).run(lines);
                }
                return 0; // the chat ended: stop the cluster (finally)
            }
            while (true) {
                int rc = coordinator.waitFor();
                if (stopping) {
                    return rc;
                }
                if (restartsCoordinator(rc)) {
                    // killed (kill -9, the OOM killer): it held no state the nodes need, so start it again; it reloads their shards
                    spec.commandLine().getErr().println("juno: the coordinator died (exit " + rc + "); restarting it");
                    coordinator = start(coordApp, coordProps, logDir.resolve("coordinator.log"), jfr.jvmOptions("coordinator"), coordEnv);
                    coordinatorProcess = coordinator;
                    continue;
                }
                spec.commandLine().getErr().println("juno: the coordinator exited with " + rc + fatalLine(logDir.resolve("coordinator.log"))
                        + "; see " + logDir.resolve("coordinator.log"));
                return rc;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        } finally {
            stopAll();
        }
    }

    /**
     * Whether a coordinator that ended with {@code rc} is started again: when a signal killed it (exit 128 + signal, e.g.
     * 137 for SIGKILL), not when it exited by itself (0, or 1 after an impossible configuration, which would only repeat).
     */
    static boolean restartsCoordinator(int rc) {
        return rc > 128 && rc != 130 && rc != 143; // SIGINT/SIGTERM are a request to stop
    }

    /** ": REASON" from the last FATAL line of the coordinator's log, or "". */
    static String fatalLine(Path log) {
        try (var lines = Files.lines(log)) {
            return lines.filter(l -> l.contains("FATAL: ")).reduce((a, b) -> b)
                    .map(l -> ": " + l.substring(l.indexOf("FATAL: ") + 7)).orElse("");
        } catch (IOException | java.io.UncheckedIOException e) {
            return "";
        }
    }

    /**
     * The system properties of node {@code i}'s JVM: its port (on loopback), the folder of the model (the only one it opens
     * models from), its name, our pid, and {@code --backend} when given.
     */
    static Map<String, String> nodeProperties(int i, int port, Map<String, String> backendProps, Path modelsDir) {
        try {
            return nodeProperties(i, port, backendProps, modelsDir, null);
        } catch (IOException e) {
            throw new CliException(e.getMessage());
        }
    }

    /** As above, with mutual TLS from {@code tls} (null: plaintext): the node serves node-I.pem and wants the CA's clients. */
    static Map<String, String> nodeProperties(int i, int port, Map<String, String> backendProps, Path modelsDir, Path tls) throws IOException {
        Map<String, String> props = new LinkedHashMap<>();
        if (tls != null) {
            props.putAll(ml.juno.coordinator.tls.TlsDir.nodeProperties(tls, "node-" + i, port));
        }
        props.put("quarkus.http.port", Integer.toString(port));
        props.put("quarkus.http.host", "127.0.0.1");
        props.put("juno.node.models-dir", modelsDir.toString());
        props.put("juno.node.id", "node-" + i);
        props.put("juno.parent-pid", Long.toString(ProcessHandle.current().pid()));
        props.putAll(backendProps);
        return props;
    }

    /** Starts node {@code i} and starts it again on the same port whenever it exits, until we stop. */
    private void superviseNode(Path app, int i, int port, Map<String, String> backendProps) throws IOException {
        Map<String, String> props = nodeProperties(i, port, backendProps, model.resolve().toRealPath().getParent(), tlsDir);
        Map<String, String> withTrace = new LinkedHashMap<>(props);
        withTrace.putAll(verbose.properties());
        Process p = start(app, withTrace, logDir.resolve("node-" + i + ".log"), jfr.jvmOptions("node-" + i), Map.of());
        p.onExit().thenRun(() -> {
            if (!stopping) {
                spec.commandLine().getErr().println("juno: node-" + i + " exited with " + p.exitValue() + "; restarting it");
                try {
                    superviseNode(app, i, port, backendProps);
                } catch (IOException e) {
                    spec.commandLine().getErr().println("juno: cannot restart node-" + i + ": " + e.getMessage());
                }
            }
        });
    }

    private synchronized Process start(Path app, Map<String, String> props, Path log, List<String> jvmOptions,
                                       Map<String, String> environment) throws IOException {
        if (stopping) {
            throw new IOException("stopping");
        }
        boolean tee = verbose.verbose && log.getFileName().toString().equals("coordinator.log");
        ProcessBuilder pb = new ProcessBuilder(AppProcess.command(app, props, jvmOptions)).redirectErrorStream(true)
                .redirectOutput(tee ? ProcessBuilder.Redirect.PIPE : ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(environment);
        Process p = pb.start();
        children.add(p);
        if (tee) { // --verbose: the coordinator's log on the terminal too
            Thread.ofVirtual().name("juno-coordinator-log").start(() -> {
                try (var in = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
                     var file = Files.newBufferedWriter(log, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND)) {
                    for (String line; (line = in.readLine()) != null; ) {
                        file.write(line);
                        file.newLine();
                        file.flush();
                        System.out.println(line);
                    }
                } catch (IOException ended) {
                    // the coordinator exited
                }
            });
        }
        return p;
    }

    private void stopAll() {
        List<Process> all;
        boolean first;
        synchronized (this) {
            first = !stopped;
            stopping = true;
            stopped = true;
            all = new ArrayList<>(children);
        }
        if (!first) { // the other caller (main thread or shutdown hook) stops them; wait for it, summary included
            try {
                stoppedAll.await(drain.millis() + 30_000, java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
        }
        // the coordinator first, so it can drain its running requests (--drain-timeout) while the nodes still compute
        Process coordinator = coordinatorProcess;
        if (coordinator != null && coordinator.isAlive()) {
            coordinator.destroy();
            try {
                if (!coordinator.waitFor(drain.millis() + 10_000, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                    coordinator.destroyForcibly();
                }
            } catch (InterruptedException e) {
                coordinator.destroyForcibly();
            }
        }
        for (Process p : all) {
            p.destroy();
        }
        for (Process p : all) {
            try {
                if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
            }
        }
        jfr.printSummary(spec.commandLine().getOut()); // every JVM has exited and written its recording
        stoppedAll.countDown();
    }
}
