package ml.juno.e2e.harness;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts a packaged Quarkus app as a real separate JVM on a free port, waits until it answers its
 * liveness endpoint, keeps its log in a file, and stops it on {@link #close()}.
 */
public final class AppLauncher implements AutoCloseable {

    private final Process process;
    private final Path log;
    private final String host;
    private final int port;

    private AppLauncher(Process process, Path log, String host, int port) {
        this.process = process;
        this.log = log;
        this.host = host;
        this.port = port;
    }

    /** A free port below the kernel's ephemeral range, so no outgoing connection takes it before the child binds it. */
    public static int freePort() {
        return ml.juno.cli.LoopbackPorts.pick();
    }

    public static Path nodeApp() {
        return Path.of(System.getProperty("juno.node.app", "../node-service/target/quarkus-app/quarkus-run.jar"));
    }

    /** Starts {@code app} with {@code -Dquarkus.http.port=<free port>} and the given extra properties. */
    public static AppLauncher start(String name, Path app, Map<String, String> props, Duration timeout) throws IOException, InterruptedException {
        return start(name, app, props, timeout, freePort());
    }

    /** As {@link #start(String, Path, Map, Duration)} on a given port (e.g. restarting a node where it was). */
    public static AppLauncher start(String name, Path app, Map<String, String> props, Duration timeout, int port) throws IOException, InterruptedException {
        return launch(name, "127.0.0.1", port, javaCommand(app, "127.0.0.1", port, props), timeout);
    }

    /** The command line {@link #start} runs: {@code app} listening on {@code host:port} with the given properties. */
    public static List<String> javaCommand(Path app, String host, int port, Map<String, String> props) {
        if (!Files.isRegularFile(app)) {
            throw new IllegalStateException("packaged app missing: " + app + " (run the build's package phase first)");
        }
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--add-modules=jdk.incubator.vector");
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Xmx512m");
        cmd.add("-Dquarkus.http.port=" + port);
        cmd.add("-Dquarkus.http.host=" + host);
        if (!props.containsKey("juno.node.models-dir")) { // nodes open models only under it (the coordinator app ignores it)
            cmd.add("-Djuno.node.models-dir=" + Path.of(System.getProperty("juno.models.dir", "../models")).toAbsolutePath());
        }
        props.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.add("-jar");
        cmd.add(app.toString());
        return cmd;
    }

    /**
     * Starts an arbitrary command that serves HTTP on {@code port} (e.g. {@code juno local --api-port PORT}), with
     * its output in the log file, and waits until it is live.
     */
    public static AppLauncher startCommand(String name, int port, List<String> cmd, Duration timeout) throws IOException, InterruptedException {
        return launch(name, "127.0.0.1", port, cmd, timeout);
    }

    /** As {@link #startCommand(String, int, List, Duration)} for a server reached at {@code host} (e.g. in a network namespace). */
    public static AppLauncher startCommand(String name, String host, int port, List<String> cmd, Duration timeout) throws IOException, InterruptedException {
        return launch(name, host, port, cmd, timeout);
    }

    private static AppLauncher launch(String name, String host, int port, List<String> cmd, Duration timeout) throws IOException, InterruptedException {
        Path logDir = Path.of("target", "e2e-logs");
        Files.createDirectories(logDir);
        Path log = logDir.resolve(name + "-" + port + ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        AppLauncher launcher = new AppLauncher(p, log, host, port);
        try {
            launcher.awaitLive(timeout);
        } catch (RuntimeException | IOException | InterruptedException e) {
            launcher.close();
            throw e;
        }
        return launcher;
    }

    private void awaitLive(Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("process exited with " + process.exitValue() + " before it was live; log:\n" + Files.readString(log));
            }
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(url("/q/health/live")).timeout(Duration.ofSeconds(2)).build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException("not live within " + timeout + "; log:\n" + Files.readString(log));
    }

    public int port() {
        return port;
    }

    /** The address the server is reached at ({@code 127.0.0.1} unless it runs on a host of its own). */
    public String host() {
        return host;
    }

    public URI url(String path) {
        return URI.create("http://" + host + ":" + port + path);
    }

    public Process process() {
        return process;
    }

    public String log() throws IOException {
        return Files.readString(log);
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(Duration.ofSeconds(10))) {
                process.destroyForcibly().waitFor(Duration.ofSeconds(5));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
