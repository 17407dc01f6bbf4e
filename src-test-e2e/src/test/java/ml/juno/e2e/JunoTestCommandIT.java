package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.Test;

/**
 * {@code juno test} on the bundled model, as a user runs it: the CLI starts real clusters (pipeline and tensor, node
 * processes and a coordinator on loopback) and checks them over HTTP; it must report every check and exit 0. A bad
 * option must fail with exit 2 before anything starts.
 */
class JunoTestCommandIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();

    private static List<String> juno(String... args) {
        List<String> cmd = new java.util.ArrayList<>(List.of("test"));
        cmd.addAll(List.of(args));
        return ml.juno.e2e.harness.JunoCli.command(cmd.toArray(String[]::new));
    }

    @Test
    void junoTest_passesEveryCheckOnTheBundledModel() throws Exception {
        Shell.Result r = Shell.run(juno("--nodes", "2", "--log-dir", "target/e2e-logs/juno-test"), ROOT.resolve("src-test-e2e"),
                Map.of(), Duration.ofMinutes(8));
        assertEquals(0, r.exitCode(), r.describe());
        for (String p : List.of("pipeline", "tensor")) {
            for (String check : List.of(" greedy answer", " deterministic at temperature 0", " multi-turn chat reuses the prefix cache",
                    " FLOAT16 activations", " INT8 activations")) {
                assertTrue(r.out().contains("PASS   " + p + check), "missing PASS for " + p + check + "\n" + r.describe());
            }
        }
        assertTrue(r.out().contains("all checks passed"), r.describe());
    }

    @Test
    void junoTest_refusesAnUnknownParallelism() throws Exception {
        Shell.Result r = Shell.run(juno("--pType", "diagonal"), ROOT.resolve("src-test-e2e"), Map.of(), Duration.ofMinutes(1));
        assertEquals(1, r.exitCode(), r.describe());
        assertTrue(r.err().contains("--pType takes pipeline and/or tensor"), r.describe());
    }
}
