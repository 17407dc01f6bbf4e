package ml.juno.cli;

import java.net.URI;
import java.nio.file.Path;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code juno local}: serves one model from one process (no gRPC), with the OpenAI-compatible API, the web
 * console at {@code /}, health and metrics, by starting the packaged coordinator app in the foreground.
 */
@Command(name = "local", mixinStandardHelpOptions = true,
        description = "Serve a model from one process: OpenAI-compatible API, web console at /, /q/health, /q/metrics.")
final class LocalCommand implements Callable<Integer> {

    @Mixin
    ModelOption model = new ModelOption();

    @Option(names = "--api-port", defaultValue = "${env:JUNO_API_PORT:-${env:API_PORT:-8080}}", description = "HTTP port of the API and console (default: ${DEFAULT-VALUE}, env JUNO_API_PORT or API_PORT).")
    int apiPort;

    @Option(names = "--host", defaultValue = "${env:JUNO_HOST:-127.0.0.1}", description = "Address to listen on (default: ${DEFAULT-VALUE}, loopback only; 0.0.0.0 for every interface, then set API keys).")
    String host;

    @Option(names = {"--threads", "-t"}, defaultValue = "0", description = "CPU threads for the engine; 0 = all cores (default).")
    int threads;

    @Option(names = {"--ctx-size", "-c"}, defaultValue = "0", description = "Context length in tokens; 0 = the model's (default).")
    int contextLength;

    @Option(names = "--max-sequences", description = "Sequences decoded together at most (default: the engine's).")
    Integer maxSequences;

    @Option(names = "--max-queue", description = "Requests waiting at most before 429 (default: the engine's).")
    Integer maxQueue;

    @Mixin
    BackendOption backend = new BackendOption();

    @Option(names = "--dtype", paramLabel = "DTYPE",
            description = "Accepted for the old command line: activations on the wire between nodes (FLOAT16, INT8, FLOAT32); one process has no wire, so it changes nothing here.")
    String dtype;

    @Mixin
    ApiAccessOptions access = new ApiAccessOptions();

    @Mixin
    DrainOption drain = new DrainOption();

    @Mixin
    ExpertCacheOption expertCache = new ExpertCacheOption();

    @Mixin
    VerboseOption verbose = new VerboseOption();

    @Mixin
    LoraPlayOption lora = new LoraPlayOption();

    @Mixin
    LoraModulesOption loraModules = new LoraModulesOption();

    @Mixin
    JfrOptions jfr = new JfrOptions();

    @Mixin
    GenerationDefaults generation = new GenerationDefaults();

    @Option(names = "--chat", negatable = true,
            description = "Open the terminal chat beside the API (default: when run on a terminal); the server log then goes to juno-logs/.")
    Boolean chat;

    @Override
    public Integer call() {
        Map<String, String> props = properties();
        jfr.model(model.resolve());
        List<String> jvmOptions = jvmOptions();
        Path app = JunoHome.requireApp(JunoHome.detect().coordinatorApp());
        if (jfr.enabled()) {
            System.err.println("juno: recording JFR (" + jfr.duration + ") to " + jfr.file("local"));
        }
        if (chat != null ? chat : TerminalChat.onTerminal()) {
            return withChat(app, props, jvmOptions);
        }
        return AppProcess.runForeground(app, props, jvmOptions, access.environment(),
                () -> jfr.printSummary(new java.io.PrintWriter(System.out, true)));
    }

    /** The server in the background (its log in a run folder) and the terminal chat in the foreground. */
    private int withChat(Path app, Map<String, String> props, List<String> jvmOptions) {
        java.io.PrintWriter out = new java.io.PrintWriter(System.out, true);
        Path logs;
        try {
            logs = RunLogs.create(Path.of("juno-logs"), "local");
        } catch (java.io.IOException e) {
            throw new CliException("cannot create the log folder: " + e.getMessage());
        }
        Path log = logs.resolve("server.log");
        Process server = AppProcess.startBackground(app, props, jvmOptions, access.environment(), log);
        java.util.concurrent.atomic.AtomicBoolean stopped = new java.util.concurrent.atomic.AtomicBoolean();
        Runnable stop = () -> {
            if (stopped.compareAndSet(false, true)) {
                server.destroy();
                try {
                    if (!server.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)) {
                        server.destroyForcibly();
                    }
                } catch (InterruptedException e) {
                    server.destroyForcibly();
                }
                jfr.printSummary(out);
            }
        };
        Thread hook = new Thread(stop, "juno-local-stopper");
        Runtime.getRuntime().addShutdownHook(hook);
        out.println("Serving " + JunoHome.detect().display(model.resolve()) + " on http://" + (host.equals("0.0.0.0") ? "localhost" : host) + ":" + apiPort
                + "/ (API, console); server log: " + log + "; loading…");
        try {
            if (!AppProcess.awaitReady(server, apiPort, java.time.Duration.ofMinutes(5))) {
                out.println("juno: the server did not become ready; see " + log);
                stop.run();
                return server.isAlive() ? 1 : Math.max(1, server.exitValue());
            }
            URI base = URI.create("http://" + (host.equals("0.0.0.0") || host.equals("::") ? "127.0.0.1" : host) + ":" + apiPort);
            try (TerminalChat.Lines lines = TerminalChat.systemLines(Path.of(System.getProperty("user.home"), ".juno_history"))) {
                new TerminalChat(base, null, access.chatKey(), null,
                        generation.maxTokens != null ? generation.maxTokens : TerminalChat.SERVER_CHAT_MAX_TOKENS, out).run(lines);
            }
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 130;
        } finally {
            stop.run();
        }
    }

    /** Extra options of the coordinator's JVM: the JFR recording with {@code --jfr}. */
    List<String> jvmOptions() {
        return jfr.jvmOptions("local");
    }

    /** The system properties the coordinator app is started with. */
    Map<String, String> properties() {
        if (dtype != null) {
            try {
                ml.juno.model.wire.ActivationDtype.parse(dtype);
            } catch (IllegalArgumentException e) {
                throw new CliException(e.getMessage());
            }
        }
        Map<String, String> generationProps = generation.properties();
        Path modelPath = model.resolve();
        if (apiPort < 1 || apiPort > 65535) {
            throw new CliException("--api-port must be in 1..65535, got " + apiPort);
        }
        if (threads < 0 || contextLength < 0) {
            throw new CliException("--threads and --ctx-size must be >= 0");
        }
        Map<String, String> props = new LinkedHashMap<>();
        props.put("juno.model-path", modelPath.toAbsolutePath().toString());
        props.put("quarkus.http.port", Integer.toString(apiPort));
        props.put("quarkus.http.host", host);
        props.put("juno.threads", Integer.toString(threads));
        props.put("juno.context-length", Integer.toString(contextLength));
        props.put("juno.parent-pid", Long.toString(ProcessHandle.current().pid())); // the server exits when this launcher dies
        props.putAll(backend.properties());
        props.putAll(verbose.properties());
        props.putAll(expertCache.properties());
        props.putAll(generationProps);
        props.putAll(access.properties());
        props.putAll(drain.properties());
        String play = lora.property();
        if (play != null) {
            props.put("juno.lora-play", play);
        }
        String modules = loraModules.modulesProperty();
        if (modules != null) {
            props.put("juno.lora-modules", modules);
        }
        if (maxSequences != null) {
            if (maxSequences < 1) {
                throw new CliException("--max-sequences must be >= 1, got " + maxSequences);
            }
            props.put("juno.max-sequences", maxSequences.toString());
        }
        if (maxQueue != null) {
            if (maxQueue < 0) {
                throw new CliException("--max-queue must be >= 0, got " + maxQueue);
            }
            props.put("juno.max-queue", maxQueue.toString());
        }
        return props;
    }
}
