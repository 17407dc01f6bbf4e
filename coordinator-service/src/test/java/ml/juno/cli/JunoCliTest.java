package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    void noArguments_servesTheBundledModel_orSaysWhatIsMissing(@TempDir Path home) throws Exception {
        String before = System.getProperty("juno.home");
        System.setProperty("juno.home", home.toString());
        try {
            Run missingModel = run();
            assertEquals(1, missingModel.code());
            assertTrue(missingModel.err().startsWith("juno: bundled model missing: "), missingModel.err());

            Files.createDirectories(home.resolve("models"));
            Files.copy(Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf"), home.resolve("models/stories260K.gguf"));
            Run notBuilt = run();
            assertEquals(1, notBuilt.code(), "no packaged coordinator in this home, so nothing is started");
            assertTrue(notBuilt.out().contains("Serving models/stories260K.gguf on http://localhost:"), notBuilt.out());
            assertTrue(notBuilt.err().contains("not built: ") && notBuilt.err().contains("coordinator-service"), notBuilt.err());
        } finally {
            if (before == null) {
                System.clearProperty("juno.home");
            } else {
                System.setProperty("juno.home", before);
            }
        }
    }

    @Test
    void optionsWithoutACommand_areClusterOptions_andTheBannerNamesTheModelServed(@TempDir Path home) throws Exception {
        String before = System.getProperty("juno.home");
        System.setProperty("juno.home", home.toString()); // nothing built there: the command stops after its banner
        try {
            Path other = Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toAbsolutePath();
            Run r = run("--model-path", other.toString(), "--pType", "tensor", "--nodes", "2", "--dtype", "INT8", "--byteOrder", "BE",
                    "--max-tokens", "512", "--temperature", "0.3", "--api-port", "18080");
            assertEquals(1, r.code(), r.err());
            assertTrue(r.out().contains("Serving " + other + " on http://localhost:18080/ from 2 local node processes (tensor"), r.out());
            assertTrue(r.err().contains("not built: "), r.err());

            Run bad = run("--pType", "tensor", "--no-such-flag");
            assertEquals(2, bad.code());
            assertTrue(bad.err().contains("--no-such-flag") && bad.err().contains("Usage: juno cluster"), bad.err());

            Run badValue = run("--temperature", "9");
            assertEquals(1, badValue.code());
            assertEquals("juno: --temperature must be in 0..2, got 9.0", badValue.err().strip());
            assertEquals(0, run("--version").code(), "help and version stay top-level");
        } finally {
            if (before == null) {
                System.clearProperty("juno.home");
            } else {
                System.setProperty("juno.home", before);
            }
        }
    }

    @Test
    void help_hasNoCutOffOrOverlongLines_inAnyCommand() {
        List<String> commands = new java.util.ArrayList<>(List.of(""));
        commands.addAll(new picocli.CommandLine(new Juno()).getSubcommands().keySet());
        for (String cmd : commands) {
            Run r = cmd.isEmpty() ? run("--help") : run(cmd, "--help");
            for (String line : (r.out() + r.err()).lines().toList()) {
                assertTrue(line.length() <= 80, "'juno " + cmd + " --help' has a line of " + line.length() + " columns: " + line);
            }
        }
        // the command list shows each command's first description line: it must be a whole sentence
        String[] list = run("--help").out().split("Commands:\n")[1].split("\n\n")[0].split("\n(?=  \\S)");
        for (String entry : list) {
            String text = entry.strip().replaceAll("\\s+", " ");
            assertTrue(text.endsWith(".") || text.endsWith(")"), "a cut-off summary in the command list: " + text);
        }
    }
}
