package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class LocalCommandTest {

    static final String MODEL = Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toString();

    static LocalCommand parse(String... args) {
        LocalCommand c = new LocalCommand();
        new CommandLine(c).parseArgs(args);
        return c;
    }

    @Test
    void options_becomeTheCoordinatorsSystemProperties() {
        Map<String, String> p = parse("--model-path", MODEL, "--api-port", "18080", "--host", "127.0.0.1", "-t", "2", "-c", "256",
                "--max-sequences", "3", "--max-queue", "5").properties();
        assertEquals(Path.of(MODEL).toAbsolutePath().toString(), p.get("juno.model-path"));
        assertEquals("18080", p.get("quarkus.http.port"));
        assertEquals("127.0.0.1", p.get("quarkus.http.host"));
        assertEquals("2", p.get("juno.threads"));
        assertEquals("256", p.get("juno.context-length"));
        assertEquals("3", p.get("juno.max-sequences"));
        assertEquals("5", p.get("juno.max-queue"));
    }

    @Test
    void defaults_port8080_loopbackOnly_engineDefaults() {
        Map<String, String> p = parse("--model-path", MODEL).properties();
        assertEquals(System.getenv().getOrDefault("JUNO_API_PORT", "8080"), p.get("quarkus.http.port"));
        assertEquals(System.getenv().getOrDefault("JUNO_HOST", "127.0.0.1"), p.get("quarkus.http.host"));
        assertFalse(p.containsKey("juno.api.key-file"), "no keys unless asked");
        assertEquals("0", p.get("juno.threads"));
        assertFalse(p.containsKey("juno.max-sequences"), "left to the engine's defaults");
    }

    @Test
    void apiKeys_goToTheChildsEnvironment_neverItsCommandLine(@TempDir Path dir) throws Exception {
        Path keys = java.nio.file.Files.writeString(dir.resolve("keys"), "alice:sk-alice-0123456789\n");
        LocalCommand c = parse("--model-path", MODEL, "--api-key-file", keys.toString(), "--api-key", "ci:sk-ci-0123456789",
                "--rate-limit", "60rpm,200000tpm", "--metrics-public");
        Map<String, String> p = c.properties();
        assertEquals(keys.toAbsolutePath().toString(), p.get("juno.api.key-file"));
        assertEquals("60rpm,200000tpm", p.get("juno.api.rate-limit"));
        assertEquals("true", p.get("juno.api.metrics-public"));
        assertTrue(c.access.environment().get("JUNO_API_KEYS").endsWith("ci:sk-ci-0123456789"));
        List<String> cmd = AppProcess.command(Path.of("app.jar"), p, List.of());
        assertFalse(String.join(" ", cmd).contains("sk-ci"), "the key is not on the command line: " + cmd);
        assertEquals("--rate-limit '5rps': '5rps' is not Nrpm or Ntpm (each at most once), e.g. 60rpm,200000tpm",
                assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--rate-limit", "5rps").properties()).getMessage());
        assertTrue(assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--api-key", "short").properties())
                .getMessage().contains("shorter than 8"));
        assertTrue(assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--api-key-file", dir.resolve("none").toString())
                .properties()).getMessage().contains("is not a readable file"));
    }

    @Test
    void drainTimeout_becomesQuarkusShutdownTimeout() {
        assertEquals("30000ms", parse("--model-path", MODEL).properties().get("quarkus.shutdown.timeout"), "30 s by default");
        assertEquals("120000ms", parse("--model-path", MODEL, "--drain-timeout", "2m").properties().get("quarkus.shutdown.timeout"));
        assertEquals("0ms", parse("--model-path", MODEL, "--drain-timeout", "0s").properties().get("quarkus.shutdown.timeout"));
        assertEquals("--drain-timeout 'soon' is not a duration like 30s or 2m",
                assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--drain-timeout", "soon").properties()).getMessage());
        assertEquals(String.valueOf(ProcessHandle.current().pid()), parse("--model-path", MODEL).properties().get("juno.parent-pid"),
                "the server watches its launcher");
    }

    @Test
    void missingModelOrBadPort_isOneLineError() {
        CliException missing = assertThrows(CliException.class, () -> parse("--model-path", "/no/such.gguf").properties());
        assertTrue(missing.getMessage().contains("/no/such.gguf"), missing.getMessage());
        CliException port = assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--api-port", "0").properties());
        assertEquals("--api-port must be in 1..65535, got 0", port.getMessage());
    }

    @Test
    void jfr_addsOneRecordingToTheChildJvm(@TempDir Path dir) {
        assertEquals(List.of(), parse("--model-path", MODEL).jvmOptions(), "no recording unless asked");
        LocalCommand c = parse("--model-path", MODEL, "--jfr", "5m", "--jfr-dir", dir.toString());
        c.jfr.model(Path.of(MODEL));
        List<String> opts = c.jvmOptions();
        assertEquals(1, opts.size());
        String o = opts.get(0);
        assertTrue(o.startsWith("-XX:StartFlightRecording="), o);
        assertTrue(o.contains("duration=5m") && o.contains("dumponexit=true") && o.contains("settings=default"), o);
        assertTrue(o.contains("filename=" + dir.toAbsolutePath().normalize().resolve("juno-stories260K-")), o);
        assertFalse(o.contains("juno.MatMul"), o);
        assertTrue(parse("--model-path", MODEL, "--jfr", "30s", "--jfr-matmul").jvmOptions().get(0)
                .endsWith(",+juno.MatMul#enabled=true"));
        List<String> cmd = AppProcess.command(Path.of("app.jar"), c.properties(), opts);
        assertEquals(o, cmd.get(AppProcess.JVM_FLAGS.size() + 1), "after the engine's flags, before -D and -jar");
    }

    @Test
    void jfr_badDurationOrMatMulAlone_isOneLineError() {
        CliException duration = assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--jfr", "5 minutes").jvmOptions());
        assertEquals("--jfr takes a duration such as 30s, 5m, 1h or 1d, got '5 minutes'", duration.getMessage());
        CliException matMul = assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--jfr-matmul").jvmOptions());
        assertEquals("--jfr-matmul needs --jfr DURATION", matMul.getMessage());
        CliException dir = assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--jfr", "1m", "--jfr-dir", "/no/such/dir").jvmOptions());
        assertTrue(dir.getMessage().contains("/no/such/dir"), dir.getMessage());
    }
}
