package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;

class JunoCliTest {

    record Run(int code, String out, String err) {}

    static Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Juno.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void help_listsEveryDesignedSubcommand() {
        Run r = run("--help");
        assertEquals(0, r.code());
        for (String cmd : List.of("local", "cluster", "node", "coordinator", "generate", "bench", "tokenize",
                "gguf-info", "quantize", "synth", "lora", "merge", "test", "metrics")) {
            assertTrue(r.out().contains("  " + cmd + " ") || r.out().contains("  " + cmd + "\n"), "help should list " + cmd + ":\n" + r.out());
        }
    }

    @Test
    void unknownSubcommand_isUsageErrorWithExitCode2() {
        Run r = run("frobnicate");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("frobnicate"), r.err());
        assertTrue(r.err().contains("Usage: juno"), r.err());
    }

    @Test
    void badFlag_isUsageErrorWithExitCode2() {
        Run r = run("node", "--no-such-flag");
        assertEquals(2, r.code());
        assertTrue(r.err().contains("--no-such-flag"), r.err());
    }

    @Test
    void nodeWithInvalidPort_failsWithOneLineError() {
        Run r = run("node", "--port", "70000");
        assertEquals(1, r.code());
        assertEquals("juno: --port must be in 1..65535, got 70000", r.err().strip());
    }

    @Test
    void noArguments_describesTheBuild() {
        Run r = run();
        assertEquals(0, r.code());
        assertTrue(r.out().startsWith("Juno "), r.out());
        assertTrue(r.out().contains("Usage: juno"), r.out());
    }
}
