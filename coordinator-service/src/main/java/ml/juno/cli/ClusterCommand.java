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
    GenerationDefaults generation = new GenerationDefaults();

    @Mixin
    ApiAccessOptions access = new ApiAccessOptions();

    @Option(names = "--nodes", defaultValue = "${env:JUNO_NODES:-3}", description = "Node processes to fork (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--api-port", defaultValue = "${env:JUNO_API_PORT:-8080}", description = "HTTP port of the API and console (default: ${DEFAULT-VALUE}).")
    int apiPort;

    @Option(names = "--host", defaultValue = "${env:JUNO_HOST:-127.0.0.1}", description = "Address the API listens on (default: ${DEFAULT-VALUE}, loopback only; nodes always listen on 127.0.0.1).")
    String host;

    @Option(names = "--log-dir", defaultValue = "juno-logs",
            description = "Folder of the run logs: each run writes node-N.log and coordinator.log in its own folder there, linked as 'latest' (default: ${DEFAULT-VALUE}).")
    Path logDir;

    /** Write the logs in --log-dir itself (juno test gives each cluster its folder). */
    @Option(names = "--log-dir-is-run", hidden = true)
    boolean logDirIsRun;

    /** Set for the top-level command ({@code ./juno [cluster options]}): print the banner naming the served model. */
    boolean banner;

    private final List<Process> children = new ArrayList<>();
    private volatile boolean stopping;
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
        Map<String, String> backendProps = backend.properties(); // a bad JUNO_BACKEND is an error before anything starts
        jfr.model(modelPath);
        if (logDirIsRun) {
            Files.createDirectories(logDir);
        } else {
            logDir = RunLogs.create(logDir, "cluster");
        }
        StringJoiner addresses = new StringJoiner(",");
        int[] ports = new int[nodes];
        for (int i = 0; i < nodes; i++) {
            ports[i] = LoopbackPorts.pick();
            addresses.add("127.0.0.1:" + ports[i]);
        }
        Map<String, String> coordProps = new LinkedHashMap<>();
        coordProps.put("juno.model-path", modelPath.toString());
        coordProps.put("quarkus.http.port", Integer.toString(apiPort));
        coordProps.put("quarkus.http.host", host);
        coordProps.putAll(cluster.properties(addresses.toString()));
        coordProps.putAll(generationProps);
        coordProps.putAll(access.properties());
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
        PrintWriter out = spec.commandLine().getOut();
        out.println("Cluster: " + nodes + " nodes (" + cluster.parallelism + ", " + cluster.dtype + ", " + cluster.byteOrder() + ") at "
                + addresses + "; API on http://localhost:" + apiPort + "/ ; logs in " + logDir.toAbsolutePath());
        out.flush();
        try {
            int rc = coordinator.waitFor();
            if (!stopping) {
                spec.commandLine().getErr().println("juno: the coordinator exited with " + rc + "; see " + logDir.resolve("coordinator.log"));
            }
            return rc;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        } finally {
            stopAll();
        }
    }

    /**
     * The system properties of node {@code i}'s JVM: its port (on loopback), the folder of the model (the only one it opens
     * models from), its name, our pid, and {@code --backend} when given.
     */
    static Map<String, String> nodeProperties(int i, int port, Map<String, String> backendProps, Path modelsDir) {
        Map<String, String> props = new LinkedHashMap<>();
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
        Map<String, String> props = nodeProperties(i, port, backendProps, model.resolve().toRealPath().getParent());
        Process p = start(app, props, logDir.resolve("node-" + i + ".log"), jfr.jvmOptions("node-" + i), Map.of());
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
        ProcessBuilder pb = new ProcessBuilder(AppProcess.command(app, props, jvmOptions)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(environment);
        Process p = pb.start();
        children.add(p);
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
                stoppedAll.await(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return;
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
