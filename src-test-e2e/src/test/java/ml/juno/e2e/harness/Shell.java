package ml.juno.e2e.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a command line tool to completion, stdout and stderr kept apart (validators print their verdicts on stderr). */
public final class Shell {

    /** Exit code and the two output streams of one run. */
    public record Result(int exitCode, String out, String err) {
        public String describe() {
            return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    private Shell() {
    }

    public static Result run(List<String> cmd, Path dir, Map<String, String> env, Duration timeout)
            throws IOException, InterruptedException {
        return run(cmd, dir, env, timeout, "");
    }

    /** As {@link #run(List, Path, Map, Duration)}, with {@code stdin} as the process's standard input. */
    public static Result run(List<String> cmd, Path dir, Map<String, String> env, Duration timeout, String stdin)
            throws IOException, InterruptedException {
        Path out = Files.createTempFile("juno-e2e-", ".out");
        Path err = Files.createTempFile("juno-e2e-", ".err");
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
            pb.environment().putAll(env);
            Process p = pb.start();
            try (var in = p.getOutputStream()) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            } catch (IOException gone) {
                // the process exited before reading its input: its output says why
            }
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
                return new Result(124, Files.readString(out, StandardCharsets.UTF_8),
                        "timed out after " + timeout + "\n" + Files.readString(err, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
