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
 * {@code juno metrics}. Shared by the server commands as a picocli mixin.
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

    boolean enabled() {
        return duration != null;
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
        if (!DURATION.matcher(duration).matches()) {
            throw new CliException("--jfr takes a duration such as 30s, 5m, 1h or 1d, got '" + duration + "'");
        }
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

    /** Where {@code role}'s recording goes: one name per JVM, with the start time of this command. */
    Path file(String role) {
        if (stamp == null) {
            stamp = LocalDateTime.now().format(STAMP);
        }
        return dir.toAbsolutePath().normalize().resolve("juno-" + role + "-" + stamp + ".jfr");
    }
}
