package ml.juno.engine.moe;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;

/**
 * Drops a file's pages from the OS page cache ({@code posix_fadvise(POSIX_FADV_DONTNEED)} through the C library; no
 * privileges needed for clean pages of a file nobody has mapped), so a benchmark starts cold: what a model larger than
 * memory sees. Linux only; elsewhere {@link #drop} says it could not. {@link #dropMapped} does it for a file this
 * process maps: its pages are unmapped from the process first ({@code madvise(MADV_DONTNEED)}: for a read-only shared
 * file mapping the next access reads the file again, same bytes), as the kernel keeps pages that are mapped.
 */
public final class PageCache {
    private static final int O_RDONLY = 0;
    private static final int POSIX_FADV_DONTNEED = 4;
    private static final int MADV_DONTNEED = 4;

    private PageCache() {}

    /**
     * {@link #drop} for a file this process maps read-only at {@code mapping} (the whole file, from offset 0, as
     * {@code GgufFile} maps it): the mapping's pages are released first; call it when nothing reads the mapping.
     */
    public static String dropMapped(Path file, MemorySegment mapping) {
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return "madvise is only used on Linux";
        }
        if (mapping.byteSize() > 0) {
            Linker linker = Linker.nativeLinker();
            try {
                MethodHandle madvise = linker.downcallHandle(linker.defaultLookup().findOrThrow("madvise"),
                        FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
                int rc = (int) madvise.invokeExact(mapping, mapping.byteSize(), MADV_DONTNEED);
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
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return "posix_fadvise is only used on Linux";
        }
        Linker linker = Linker.nativeLinker();
        var libc = linker.defaultLookup();
        try (Arena arena = Arena.ofConfined()) {
            MethodHandle open = linker.downcallHandle(libc.findOrThrow("open"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
            MethodHandle fadvise = linker.downcallHandle(libc.findOrThrow("posix_fadvise"), FunctionDescriptor.of(
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            MethodHandle close = linker.downcallHandle(libc.findOrThrow("close"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
            MemorySegment name = arena.allocateFrom(file.toAbsolutePath().toString());
            int fd = (int) open.invokeExact(name, O_RDONLY);
            if (fd < 0) {
                return "cannot open " + file;
            }
            int rc = (int) fadvise.invokeExact(fd, 0L, 0L, POSIX_FADV_DONTNEED);
            int ignored = (int) close.invokeExact(fd);
            return rc == 0 ? null : "posix_fadvise failed (" + rc + ")";
        } catch (Throwable t) {
            return "posix_fadvise unavailable: " + t;
        }
    }
}
