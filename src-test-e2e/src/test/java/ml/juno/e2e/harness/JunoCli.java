package ml.juno.e2e.harness;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The {@code juno} command line of the packaged coordinator app, run in a new JVM as {@code ./juno} runs it (same class path). */
public final class JunoCli {
    public static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();

    private JunoCli() {
    }

    /** {@code juno ARGS}: java with the engine's flags, {@code juno.home}, the app's class path and the main class. */
    public static List<String> command(String... args) {
        return command(List.of(), args);
    }

    /** {@code juno ARGS} with {@code jvmOptions} (system properties) before the main class. */
    public static List<String> command(List<String> jvmOptions, String... args) {
        Path app = Path.of(System.getProperty("juno.coordinator.app", ROOT.resolve("coordinator-service/target/quarkus-app").toString()));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "--sun-misc-unsafe-memory-access=allow", "-Djuno.home=" + ROOT));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", app.resolve("app") + "/*:" + app.resolve("lib/main") + "/*:" + app.resolve("lib/boot") + "/*", "ml.juno.cli.Juno"));
        cmd.addAll(List.of(args));
        return cmd;
    }
}
