package ml.juno.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.regex.Pattern;
import picocli.CommandLine.Option;

/**
 * {@code --jfr DURATION}: a Java Flight Recorder recording in every JVM a server command starts, one {@code .jfr} file
 * per JVM, written when the duration ends or when the process exits, whichever comes first. Read them with
 * {@code juno metrics}; the command that started them prints the same summary when it exits. Files are named as the
 * old product named them: {@code juno-<model>-<timestamp>.jfr} for the coordinator (or the one process of
 * {@code local}) and {@code juno-<node>-<model>-<timestamp>.jfr} for each node. Shared by the server commands as a
 * picocli mixin.
 */
final class JfrOptions {
    private static final Pattern DURATION = Pattern.compile("[1-9][0-9]*(s|m|h|d)");
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    @Option(names = "--jfr", paramLabel = "DURATION",
            description = "Record JFR for DURATION (e.g. 30s, 5m, 1h) in each JVM; files are written when it ends or at exit.")
    String duration;

    @Option(names = "--jfr-dir", paramLabel = "DIR", defaultValue = ".",
            description = "Folder for the .jfr files (default: the current one).")
    Path dir;

    @Option(names = "--jfr-matmul", description = "With --jfr: also record juno.MatMul, one event per matrix product (large files).")
    boolean matMul;

    private String stamp;
    private String model = "model";
    private final java.util.Set<Path> files = new java.util.LinkedHashSet<>();

    boolean enabled() {
        return duration != null;
    }

    /** Refuses a {@code --jfr} that is not a duration such as 30s, 5m, 1h or 1d (nothing to check without it). */
    void checkDuration() {
        if (duration != null && !DURATION.matcher(duration).matches()) {
            throw new CliException("--jfr takes a duration such as 30s, 5m, 1h or 1d, got '" + duration + "'");
        }
    }

    /**
     * The JVM options that record {@code role}'s JVM (e.g. {@code local}, {@code coordinator}, {@code node-2}), or none
     * without {@code --jfr}.
     */
    List<String> jvmOptions(String role) {
        if (duration == null) {
            if (matMul) {
                throw new CliException("--jfr-matmul needs --jfr DURATION");
            }
            return List.of();
        }
        checkDuration();
        if (!Files.isDirectory(dir)) {
            throw new CliException("--jfr-dir " + dir + " is not a directory");
        }
        StringBuilder opt = new StringBuilder("-XX:StartFlightRecording=name=juno,settings=default,duration=")
                .append(duration).append(",dumponexit=true,filename=").append(file(role));
        if (matMul) {
            opt.append(",+juno.MatMul#enabled=true");
        }
        return List.of(opt.toString());
    }

    /** The model the recordings are named after (its file name without {@code .gguf}). */
    JfrOptions model(Path modelFile) {
        String name = modelFile.getFileName().toString();
        model = (name.endsWith(".gguf") ? name.substring(0, name.length() - 5) : name).replaceAll("[^A-Za-z0-9._-]", "_");
        return this;
    }

    /**
     * Where {@code role}'s recording goes, with the start time of this command: {@code juno-<model>-<stamp>.jfr} for
     * {@code local} and {@code coordinator}, {@code juno-<role>-<model>-<stamp>.jfr} for a node ({@code node-2}).
     */
    Path file(String role) {
        if (stamp == null) {
            stamp = LocalDateTime.now().format(STAMP);
        }
        String name = role.equals("local") || role.equals("coordinator") ? "juno-" + model : "juno-" + role + "-" + model;
        Path f = dir.toAbsolutePath().normalize().resolve(name + "-" + stamp + ".jfr");
        synchronized (files) {
            files.add(f);
        }
        return f;
    }

    /**
     * After the recorded JVMs exited: the summary {@code juno metrics} prints of the files they wrote, or nothing without
     * {@code --jfr}. A recording that cannot be read is named, never an exception (the server's own exit code counts).
     */
    void printSummary(java.io.PrintWriter out) {
        if (duration == null) {
            return;
        }
        List<Path> written;
        synchronized (files) {
            written = files.stream().filter(Files::isRegularFile).toList();
        }
        if (written.isEmpty()) {
            out.println("juno: no JFR recording was written");
        } else {
            try {
                out.println("JFR summary (as 'juno metrics " + String.join(" ", written.stream().map(Path::toString).toList()) + "'):");
                MetricsCommand.print(ml.juno.coordinator.jfr.RecordingSummarizer.summarize(written), out);
            } catch (java.io.IOException | RuntimeException e) {
                out.println("juno: cannot summarise the JFR recordings: " + e.getMessage());
            }
        }
        out.flush();
    }
}
