package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import ml.juno.e2e.harness.JunoCli;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.Test;

/**
 * The {@code juno} process's own log (the tool commands run the engine in it): a warning reaches the terminal as one
 * line on stderr, and nothing below warnings does. Here the warning is the engine's fallback to its Java kernels when
 * {@code --backend native} is asked for and the library cannot load; before the process configured its logging, that
 * line was queued for a server log that never came and the user never saw it.
 */
class CliWarningsIT {

    @Test
    void bench_whereTheNativeLibraryCannotLoad_saysSoOnStderr_once() throws Exception {
        Path model = Path.of(System.getProperty("juno.models.dir", "../models"), "stories260K.gguf").toAbsolutePath();
        List<String> cmd = JunoCli.command(List.of("-Djuno.native.library=/nonexistent/libjunocpu.so"),
                "bench", "-m", model.toString(), "-t", "1", "-p", "4", "-n", "2", "-r", "1", "--backend", "native", "--json");
        Shell.Result r = Shell.run(cmd, JunoCli.ROOT.resolve("src-test-e2e"), Map.of(), Duration.ofMinutes(2));
        assertEquals(0, r.exitCode(), r.describe());
        assertTrue(r.out().contains("\"backend\":\"java\""), r.describe());
        List<String> lines = r.err().lines().filter(l -> l.startsWith("juno: ")).toList();
        assertEquals(1, lines.size(), "one line from the process's log, the fallback:\n" + r.describe());
        assertTrue(lines.get(0).matches("juno: WARN ml\\.juno\\.engine\\.backend: Juno backend: java, native kernels unavailable: "
                + "cannot load the native library /nonexistent/libjunocpu\\.so.*"), r.describe());
    }
}
