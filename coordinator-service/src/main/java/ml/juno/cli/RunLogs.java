package ml.juno.cli;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;

/**
 * One folder of process logs per run under a root ({@code juno-logs/cluster-20261201-170512/}), so runs never append
 * to each other's files, with {@code latest} linked to the newest run. The root is ignored by git.
 */
final class RunLogs {
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss");

    private RunLogs() {
    }

    /** Creates {@code root/<kind>-<stamp>[-N]/} and points {@code root/latest} at it; returns the new folder. */
    static Path create(Path root, String kind) throws IOException {
        Files.createDirectories(root);
        String base = kind + "-" + LocalDateTime.now().format(STAMP);
        Path run = null;
        for (int n = 1; run == null; n++) {
            Path candidate = root.resolve(n == 1 ? base : base + "-" + n);
            try {
                run = Files.createDirectory(candidate);
            } catch (FileAlreadyExistsException taken) {
                if (n > 1000) {
                    throw taken;
                }
            }
        }
        linkLatest(root, run);
        return run;
    }

    /** {@code root/latest} → {@code run}, replaced atomically; where links are not possible, the logs still go on. */
    private static void linkLatest(Path root, Path run) {
        Path latest = root.resolve("latest");
        Path tmp = root.resolve(".latest-" + ProcessHandle.current().pid());
        try {
            Files.deleteIfExists(tmp);
            Files.createSymbolicLink(tmp, run.getFileName());
            Files.move(tmp, latest, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException | UnsupportedOperationException | SecurityException noLinks) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // nothing to clean
            }
        }
    }
}
