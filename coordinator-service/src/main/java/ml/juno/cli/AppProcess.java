package ml.juno.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Starts a packaged Quarkus app (node or coordinator) as a child JVM with the engine's JVM flags, and
 * makes sure it dies with us (Ctrl-C, SIGTERM).
 */
final class AppProcess {

    /**
     * The flags every Juno JVM needs: the Vector API incubator module and native access for FFM, plus a loop-unroll
     * limit high enough for C2 to unroll the quantized kernels' sub-block loops (its default of 60 nodes leaves the
     * Q4_K/Q5_K/Q6_K loops rolled; measured +22% decode tokens/s on TinyLlama Q4_K_M).
     */
    static final List<String> JVM_FLAGS = List.of("--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
            "-XX:LoopUnrollLimit=300");

    private AppProcess() {}

    static String javaExecutable() {
        return ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    static List<String> command(Path app, Map<String, String> systemProperties) {
        return command(app, systemProperties, List.of());
    }

    /** As {@link #command(Path, Map)}, with extra JVM options (e.g. a JFR recording) after the engine's flags. */
    static List<String> command(Path app, Map<String, String> systemProperties, List<String> jvmOptions) {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaExecutable());
        cmd.addAll(JVM_FLAGS);
        cmd.addAll(jvmOptions);
        systemProperties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.add("-jar");
        cmd.add(app.toString());
        return cmd;
    }

    /** Runs the app in the foreground with our stdin/stdout/stderr and returns its exit code. */
    static int runForeground(Path app, Map<String, String> systemProperties) {
        return runForeground(app, systemProperties, List.of());
    }

    /** As {@link #runForeground(Path, Map)}, with extra JVM options for the child. */
    static int runForeground(Path app, Map<String, String> systemProperties, List<String> jvmOptions) {
        return runForeground(app, systemProperties, jvmOptions, Map.of(), () -> {});
    }

    /** As {@link #runForeground(Path, Map, List)}, with variables added to the child's environment (e.g. its API keys). */
    static int runForeground(Path app, Map<String, String> systemProperties, List<String> jvmOptions, Map<String, String> environment) {
        return runForeground(app, systemProperties, jvmOptions, environment, () -> {});
    }

    /**
     * As {@link #runForeground(Path, Map, List)}, with variables added to the child's environment (e.g. its API keys);
     * {@code afterExit} runs once when the child has exited, whether it ended by itself or we are being stopped (Ctrl-C,
     * SIGTERM: then from the shutdown hook, after the child is gone).
     */
    static int runForeground(Path app, Map<String, String> systemProperties, List<String> jvmOptions, Map<String, String> environment,
                             Runnable afterExit) {
        ProcessBuilder pb = new ProcessBuilder(command(app, systemProperties, jvmOptions)).inheritIO();
        pb.environment().putAll(environment);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new CliException("cannot start " + app + ": " + e.getMessage());
        }
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Runnable once = () -> {
            if (done.compareAndSet(false, true)) {
                afterExit.run();
            }
        };
        Thread killer = new Thread(() -> {
            p.destroy();
            try {
                p.waitFor();
            } catch (InterruptedException ignored) {
                p.destroyForcibly();
            }
            once.run();
        }, "juno-child-stopper");
        Runtime.getRuntime().addShutdownHook(killer);
        try {
            int rc = p.waitFor();
            once.run();
            return rc;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroy();
            return 130;
        }
    }
}
