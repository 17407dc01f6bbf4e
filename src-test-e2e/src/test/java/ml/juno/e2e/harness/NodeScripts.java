package ml.juno.e2e.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The JavaScript clients of the e2e tests ({@code src-test-e2e/js}): {@link #install} runs {@code js/setup.sh},
 * which puts the locked npm packages into {@code target/js} (and Debian's chromium when asked), then
 * {@link #run} runs one script with /usr/bin/node.
 */
public final class NodeScripts {

    /** Output and exit code of one script run. */
    public record Result(int exitCode, String output) {
        /** The lines "ok NAME …" / "FAIL NAME: …" the scripts print. */
        public List<String> checks() {
            return output.lines().filter(l -> l.startsWith("ok ") || l.startsWith("FAIL ")).toList();
        }
    }

    private static final Path SOURCES = Path.of("js");
    private static final Path TARGET = Path.of("target", "js");

    private NodeScripts() {
    }

    /** Installs the npm packages (and chromium if {@code withChromium}); idempotent and quick the second time. */
    public static synchronized void install(boolean withChromium) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", SOURCES.resolve("setup.sh").toString(), TARGET.toAbsolutePath().toString()));
        if (withChromium) {
            cmd.add("chromium");
        }
        Result r = exec(cmd, Duration.ofMinutes(withChromium ? 10 : 4));
        if (r.exitCode() != 0) {
            throw new IllegalStateException("js/setup.sh failed (" + r.exitCode() + "):\n" + r.output());
        }
    }

    /** Runs {@code node target/js/SCRIPT ARGS…}. */
    public static Result run(String script, Duration timeout, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(node(), TARGET.resolve(script).toString()));
        cmd.addAll(List.of(args));
        return exec(cmd, timeout);
    }

    private static String node() {
        return Files.isExecutable(Path.of("/usr/bin/node")) ? "/usr/bin/node" : "node";
    }

    private static Result exec(List<String> cmd, Duration timeout) throws IOException, InterruptedException {
        Path out = Files.createTempFile("juno-e2e-", ".log");
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
                return new Result(124, "timed out after " + timeout + ":\n" + Files.readString(out, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /**
     * Runs an SDK check script against {@code server}'s {@code /v1} and the bundled model, and asserts that it reports
     * exactly {@code checks} as {@code ok} lines, exits 0, and leaves the server running.
     */
    public static void assertEveryCheckPasses(String script, Duration timeout, AppLauncher server, List<String> checks)
            throws IOException, InterruptedException {
        Result r = run(script, timeout, server.url("/v1").toString(), LocalServer.MODEL_ID);
        List<String> got = r.checks();
        for (String name : checks) {
            org.junit.jupiter.api.Assertions.assertTrue(got.contains("ok " + name),
                    name + " did not pass:\n" + r.output() + "\nserver log:\n" + server.log());
        }
        org.junit.jupiter.api.Assertions.assertEquals(checks.size(), got.size(), r.output());
        org.junit.jupiter.api.Assertions.assertEquals(0, r.exitCode(), r.output());
        org.junit.jupiter.api.Assertions.assertTrue(server.process().isAlive(), "the server is still running");
    }
}
