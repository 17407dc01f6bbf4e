package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import ml.juno.e2e.harness.AppLauncher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Impossible cluster layouts end the coordinator within seconds, exit code 1 and the reason, instead of a server
 * that stays up with readiness DOWN: more pipeline nodes than layers (stories260K has 5), a tensor split that does not
 * divide the heads (8 heads, 4 KV heads over 3 nodes), through {@code juno coordinator} and {@code juno cluster}.
 */
class FailFastIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
    static final Path MODEL = Path.of(System.getProperty("juno.models.dir", ROOT.resolve("models").toString()), "stories260K.gguf")
            .toAbsolutePath();

    @TempDir
    Path tmp;

    record Run(int exitCode, String output, long millis) {
    }

    Run juno(Duration limit, String... args) throws Exception {
        Path app = Path.of(System.getProperty("juno.coordinator.app", ROOT.resolve("coordinator-service/target/quarkus-app").toString()));
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx128m",
                "-Djuno.home=" + ROOT, "-cp", app.resolve("app") + "/*:" + app.resolve("lib/main") + "/*", "ml.juno.cli.Juno"));
        cmd.addAll(List.of(args));
        Path out = tmp.resolve("out-" + System.nanoTime() + ".log");
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(cmd).directory(tmp.toFile()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly().waitFor();
            throw new AssertionError("still running after " + limit + ":\n" + Files.readString(out));
        }
        return new Run(p.exitValue(), Files.readString(out), (System.nanoTime() - t0) / 1_000_000);
    }

    static String unreachable(int n) {
        List<String> a = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            a.add("127.0.0.1:" + (1 + i)); // nothing listens there: the layout is refused before any node is asked
        }
        return String.join(",", a);
    }

    @Test
    void coordinator_moreNodesThanLayers_orATensorSplitThatDoesNotDivide_exitsWithTheReason() throws Exception {
        String port = Integer.toString(AppLauncher.freePort());
        Run pipeline = juno(Duration.ofSeconds(60), "coordinator", "-m", MODEL.toString(), "--nodes", unreachable(6), "--api-port", port);
        assertEquals(1, pipeline.exitCode(), pipeline.output());
        assertTrue(pipeline.output().contains("cannot split the model's 5 layers over 6 pipeline nodes"), pipeline.output());
        Run tensor = juno(Duration.ofSeconds(60), "coordinator", "-m", MODEL.toString(), "--nodes", unreachable(5), "--pType", "tensor",
                "--api-port", port);
        assertEquals(1, tensor.exitCode(), tensor.output());
        assertTrue(tensor.output().contains("cannot split 8 heads and 4 KV heads into 5 tensor-parallel slices"), tensor.output()); // 3: uneven, works
        System.out.println("fail fast: pipeline " + pipeline.millis() + " ms, tensor " + tensor.millis() + " ms");
    }

    @Test
    void cluster_moreNodesThanLayers_exitsNonZero_sayingWhy_andStopsItsNodes() throws Exception {
        Run r = juno(Duration.ofSeconds(90), "cluster", "-m", MODEL.toString(), "--nodes", "6", "--api-port",
                Integer.toString(AppLauncher.freePort()), "--log-dir", tmp.resolve("logs").toString());
        assertEquals(1, r.exitCode(), r.output());
        assertTrue(r.output().contains("juno: the coordinator exited with 1: model failed to load: "), r.output());
        assertTrue(r.output().contains("cannot split the model's 5 layers over 6 pipeline nodes: use at most 5 nodes"), r.output());
        System.out.println("fail fast: cluster " + r.millis() + " ms");
    }
}
