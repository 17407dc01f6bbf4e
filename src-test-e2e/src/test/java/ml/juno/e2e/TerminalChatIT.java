package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.Shell;
import org.junit.jupiter.api.Test;

/**
 * The terminal chat as the old {@code ./juno} opened it: {@code juno local --chat} starts the server, chats over its API
 * with the lines it reads, and stops the server when the chat ends.
 */
class TerminalChatIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();

    private static List<String> juno(String... args) {
        return ml.juno.e2e.harness.JunoCli.command(args);
    }

    @Test
    void localWithChat_answersOnTheTerminal_andStopsTheServerWhenTheChatEnds() throws Exception {
        int port = AppLauncher.freePort();
        Shell.Result r = Shell.run(juno("local", "--chat", "--verbose", "--api-port", Integer.toString(port), "--threads", "1"), ROOT.resolve("src-test-e2e/target"),
                Map.of(), Duration.ofMinutes(3), "Once upon a time\n/stats\nThe end?\n/stats\n/exit\n");
        assertEquals(0, r.exitCode(), r.describe());
        String out = r.out();
        assertTrue(out.contains("Serving models/stories260K.gguf on http://127.0.0.1:" + port + "/"), out);
        assertTrue(out.contains("Chat with the served model at http://127.0.0.1:" + port + "/"), out);
        assertTrue(out.matches("(?s).*last answer: [1-9][0-9]* tokens in .*session: 1 answers.*"), out);
        assertTrue(out.contains("session: 2 answers") && out.contains("4 messages in the conversation"), out);
        boolean listening;
        try (Socket s = new Socket("127.0.0.1", port)) {
            listening = true;
        } catch (java.io.IOException closed) {
            listening = false;
        }
        assertFalse(listening, "the server stopped with the chat");
        // --verbose: the engine's trace, one line per step with its plan and time, in the server's log
        String logLine = out.lines().filter(l -> l.contains("server log: ")).findFirst().orElseThrow();
        java.nio.file.Path log = java.nio.file.Path.of(logLine.substring(logLine.indexOf("server log: ") + 12, logLine.indexOf("; loading")));
        String trace = java.nio.file.Files.readString(ROOT.resolve("src-test-e2e/target").resolve(log));
        assertTrue(trace.matches("(?s).*TRACE .*step \\d+: 1 rows \\([1-9][0-9]* prefill tokens, 0 decode\\) \\[seq\\d+@0\\+\\d+\\] in [0-9.]+ ms.*"), trace);
        assertTrue(trace.matches("(?s).*step \\d+: 1 rows \\(0 prefill tokens, 1 decode\\).*"), "decode steps traced too");
    }

    @Test
    void chatWithoutAServer_saysSo_andKeepsGoing() throws Exception {
        Shell.Result r = Shell.run(juno("chat", "--url", "http://127.0.0.1:1"), ROOT, Map.of(), Duration.ofMinutes(1), "Hello\n/help\n");
        assertEquals(0, r.exitCode(), r.describe());
        assertTrue(r.out().contains("error: cannot reach http://127.0.0.1:1/"), r.describe());
        assertTrue(r.out().contains("/reset   forget the conversation"), "still reading after the error: " + r.describe());
    }
}
