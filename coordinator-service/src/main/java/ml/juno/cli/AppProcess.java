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
        inherited(systemProperties).forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        systemProperties.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
        cmd.add("-jar");
        cmd.add(app.toString());
        return cmd;
    }

    /** This launcher's own properties, never passed on: where it is installed, and whom it watches. */
    private static final java.util.Set<String> NOT_INHERITED = java.util.Set.of("juno.home", "juno.parent-pid");

    /**
     * The launcher's {@code juno.*} system properties that {@code explicit} does not set (in name order), passed on to the
     * app it starts: a tuning property given in {@code JUNO_JAVA_OPTS} (e.g. {@code -Djuno.scheduler.quantum-steps=0})
     * reaches the server of {@code juno local} and the nodes of {@code juno cluster}, not only the launcher's JVM.
     */
    static Map<String, String> inherited(Map<String, String> explicit) {
        Map<String, String> out = new java.util.TreeMap<>();
        for (String k : System.getProperties().stringPropertyNames()) {
            if (k.startsWith("juno.") && !NOT_INHERITED.contains(k) && !explicit.containsKey(k)) {
                out.put(k, System.getProperty(k));
            }
        }
        return out;
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

    /** Starts the app in the background, its output appended to {@code log}. */
    static Process startBackground(Path app, Map<String, String> systemProperties, List<String> jvmOptions, Map<String, String> environment,
                                   Path log) {
        ProcessBuilder pb = new ProcessBuilder(command(app, systemProperties, jvmOptions)).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(environment);
        try {
            return pb.start();
        } catch (IOException e) {
            throw new CliException("cannot start " + app + ": " + e.getMessage());
        }
    }

    /**
     * Waits until the server on {@code port} answers its readiness check, or {@code process} exits, or the timeout ends.
     * True when it is ready.
     */
    static boolean awaitReady(Process process, int port, java.time.Duration timeout) throws InterruptedException {
        java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder().connectTimeout(java.time.Duration.ofSeconds(2)).build();
        java.net.http.HttpRequest ready = java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/q/health/ready"))
                .timeout(java.time.Duration.ofSeconds(5)).build();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (process.isAlive() && System.nanoTime() < deadline) {
            try {
                if (http.send(ready, java.net.http.HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return true;
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            Thread.sleep(250);
        }
        return false;
    }

    /**
     * A command line that runs {@code juno ARGS} in a new JVM like this one (the engine's flags, our class path and
     * {@code juno.home}): how {@code juno test} and {@code juno matrix} start the servers they check.
     */
    static List<String> junoCommand(List<String> args) {
        List<String> cmd = new ArrayList<>();
        cmd.add(javaExecutable());
        cmd.addAll(JVM_FLAGS);
        String home = System.getProperty("juno.home");
        if (home != null) {
            cmd.add("-Djuno.home=" + home);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Juno.class.getName()));
        cmd.addAll(args);
        return cmd;
    }
}
