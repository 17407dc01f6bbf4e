package ml.juno.engine.lora;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Writes a file so that readers see the old one or the whole new one, never a part: into a temporary file beside it,
 * then renamed over it (atomically where the file system can). A failed write leaves nothing behind.
 */
final class AtomicWrite {

    /** What fills the temporary file. */
    @FunctionalInterface
    interface Body {
        void write(Path tmp) throws IOException;
    }

    private AtomicWrite() {
    }

    static void to(Path target, Body body) throws IOException {
        Path abs = target.toAbsolutePath();
        Path tmp = Files.createTempFile(abs.getParent(), abs.getFileName().toString(), ".tmp");
        try {
            body.write(tmp);
            try { // a temporary file is owner-only; the result is an ordinary file (rw-r--r--)
                Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
            } catch (UnsupportedOperationException notPosix) {
                // the file system's defaults stand
            }
            try {
                Files.move(tmp, abs, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, abs, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }
}
