package ml.juno.engine.moe;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import ml.juno.engine.kernel.Libc;

/**
 * Drops a file's pages from the OS page cache ({@code posix_fadvise(POSIX_FADV_DONTNEED)} through the C library; no
 * privileges needed for clean pages of a file nobody has mapped), so a benchmark starts cold: what a model larger than
 * memory sees. Linux only; elsewhere {@link #drop} says it could not. {@link #dropMapped} does it for a file this
 * process maps: its pages are unmapped from the process first ({@code madvise(MADV_DONTNEED)}: for a read-only shared
 * file mapping the next access reads the file again, same bytes), as the kernel keeps pages that are mapped.
 */
public final class PageCache {
    private PageCache() {}

    /**
     * {@link #drop} for a file this process maps read-only at {@code mapping} (the whole file, from offset 0, as
     * {@code GgufFile} maps it): the mapping's pages are released first; call it when nothing reads the mapping.
     */
    public static String dropMapped(Path file, MemorySegment mapping) {
        if (!Libc.linux()) {
            return "madvise is only used on Linux";
        }
        if (mapping.byteSize() > 0) {
            try {
                int rc = (int) Libc.madvise().invokeExact(mapping, mapping.byteSize(), Libc.MADV_DONTNEED);
                if (rc != 0) {
                    return "madvise failed on the mapping of " + file;
                }
            } catch (Throwable t) {
                return "madvise unavailable: " + t;
            }
        }
        return drop(file);
    }

    /** Asks the kernel to forget {@code file}'s cached pages; returns {@code null} when it did, else why not. */
    public static String drop(Path file) {
        if (!Libc.linux()) {
            return "posix_fadvise is only used on Linux";
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment name = arena.allocateFrom(file.toAbsolutePath().toString());
            int fd = (int) Libc.open().invokeExact(name, Libc.O_RDONLY);
            if (fd < 0) {
                return "cannot open " + file;
            }
            int rc = (int) Libc.fadvise().invokeExact(fd, 0L, 0L, Libc.POSIX_FADV_DONTNEED);
            int ignored = (int) Libc.close().invokeExact(fd);
            return rc == 0 ? null : "posix_fadvise failed (" + rc + ")";
        } catch (Throwable t) {
            return "posix_fadvise unavailable: " + t;
        }
    }
}
