package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
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
    void defaults_port8080_allInterfaces_engineDefaults() {
        Map<String, String> p = parse("--model-path", MODEL).properties();
        assertEquals(System.getenv().getOrDefault("JUNO_API_PORT", "8080"), p.get("quarkus.http.port"));
        assertEquals("0", p.get("juno.threads"));
        assertFalse(p.containsKey("juno.max-sequences"), "left to the engine's defaults");
    }

    @Test
    void missingModelOrBadPort_isOneLineError() {
        CliException missing = assertThrows(CliException.class, () -> parse("--model-path", "/no/such.gguf").properties());
        assertTrue(missing.getMessage().contains("/no/such.gguf"), missing.getMessage());
        CliException port = assertThrows(CliException.class, () -> parse("--model-path", MODEL, "--api-port", "0").properties());
        assertEquals("--api-port must be in 1..65535, got 0", port.getMessage());
    }
}
