package ml.juno.e2e.harness;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * {@code juno local} serving the bundled {@code models/stories260K.gguf} on a free port (the CLI starting the
 * packaged coordinator as its child), shared by the e2e classes of this JVM: started on first use, stopped when
 * the JVM exits.
 */
public final class LocalServer {

    public static final String MODEL_ID = "stories260K";
    private static AppLauncher server;

    private LocalServer() {
    }

    public static synchronized AppLauncher get() throws IOException, InterruptedException {
        if (server == null || !server.process().isAlive()) {
            Path root = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
            Path model = Path.of(System.getProperty("juno.models.dir", root.resolve("models").toString()), "stories260K.gguf").toAbsolutePath();
            AppLauncher s = start(model, "-Xmx128m");
            Runtime.getRuntime().addShutdownHook(new Thread(s::close, "juno-e2e-local-server-stop"));
            server = s;
        }
        return server;
    }

    /**
     * A new {@code juno local} on {@code model} through the launcher's own command, as a user runs it
     * ({@code juno local --model-path M --api-port P}), extra CLI options appended; returns once it is ready.
     */
    public static AppLauncher start(Path model, String heap, String... options) throws IOException, InterruptedException {
        Path root = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
        Path app = Path.of(System.getProperty("juno.coordinator.app", root.resolve("coordinator-service/target/quarkus-app").toString()));
        int port = AppLauncher.freePort();
        List<String> cmd = new java.util.ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", heap,
                "-Djuno.home=" + root, "-cp", app.resolve("app") + "/*:" + app.resolve("lib/main") + "/*", "ml.juno.cli.Juno",
                "local", "--model-path", model.toString(), "--api-port", Integer.toString(port), "--host", "127.0.0.1"));
        cmd.addAll(List.of(options));
        AppLauncher s = AppLauncher.startCommand("juno-local-" + model.getFileName(), port, cmd, Duration.ofSeconds(60));
        awaitReady(s, Duration.ofSeconds(60));
        return s;
    }

    /** Waits until {@code /q/health/ready} answers 200 (the model is loaded). */
    public static void awaitReady(AppLauncher s, Duration timeout) throws IOException, InterruptedException {
        HttpClient http = HttpClient.newHttpClient();
        long deadline = System.nanoTime() + timeout.toNanos();
        String last = "";
        while (System.nanoTime() < deadline) {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(s.url("/q/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() == 200) {
                return;
            }
            last = r.body();
            Thread.sleep(100);
        }
        throw new IllegalStateException("not ready within " + timeout + ": " + last + "\nlog:\n" + s.log());
    }
}
