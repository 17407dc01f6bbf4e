package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.stream.Stream;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.NodeScripts;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The web console at {@code /} in headless Chromium (Debian's, driven by playwright-core): it loads with no
 * request leaving the server, sends a message, shows the answer while it streams, and reports tokens/s.
 */
class WebConsoleIT {

    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        NodeScripts.install(true);
        server = LocalServer.get();
    }

    @Test
    void console_streamsAnAnswerInHeadlessChromium() throws Exception {
        Path profile = Files.createTempDirectory("juno-chromium-");
        try {
            NodeScripts.Result r = NodeScripts.run("console-check.mjs", Duration.ofMinutes(2), server.url("/").toString(), profile.toString());
            System.out.println(r.checks());
            assertEquals(0, r.exitCode(), r.output() + "\nserver log:\n" + server.log());
            assertTrue(r.checks().stream().anyMatch(l -> l.startsWith("ok console")), r.output());
            assertTrue(r.output().contains("running=true"), "text appeared while the answer was still streaming: " + r.output());
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void healthDashboard_showsTheServersStateInHeadlessChromium() throws Exception {
        Path profile = Files.createTempDirectory("juno-chromium-");
        try {
            NodeScripts.Result r = NodeScripts.run("health-check.mjs", Duration.ofMinutes(2), server.url("/").toString(), profile.toString(), "0");
            assertEquals(0, r.exitCode(), r.output() + "\nserver log:\n" + server.log());
            assertTrue(r.checks().stream().anyMatch(l -> l.startsWith("ok health-ui")), r.output());
        } finally {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
