package ml.juno.engine.kernel;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Large anonymous memory asked to be backed by transparent huge pages where the kernel allows it ({@code mmap} then
 * {@code madvise(MADV_HUGEPAGE)} before the first touch, so a system whose THP mode is {@code madvise} gives 2 MiB
 * pages; the pages arrive zeroed, so nothing is written twice), unmapped when the arena closes. Where that is not
 * possible (not Linux, the calls refused) the arena allocates as usual. Streaming weights through 4 KiB pages walks a
 * page table every 4 KiB and restarts the hardware prefetcher at every page boundary; through 2 MiB pages hardly ever:
 * on a 2-core Zen 4 VM a stream of reads ran at 29.7 GB/s from huge pages against 26.0 from the page cache's mapping
 * of the same file and 19.8 from anonymous 4 KiB pages (one thread).
 */
public final class HugeMemory {
    /** The huge page size of x86-64 and of arm64 with 4 KiB base pages. */
    public static final long PAGE = 2L << 20;
    private static final int MAP_NORESERVE = 0x4000;
    private static final Path THP = Path.of("/sys/kernel/mm/transparent_hugepage/enabled");

    private HugeMemory() {}

    /**
     * Whether anonymous memory can get transparent huge pages here: Linux, and a THP mode of {@code always} or
     * {@code madvise} (not {@code never}, nor a kernel without THP).
     */
    public static boolean available() {
        return Mode.AVAILABLE;
    }

    private static final class Mode {
        static final boolean AVAILABLE = Libc.linux() && thpAllowed();

        private static boolean thpAllowed() {
            try {
                String s = Files.readString(THP);
                return s.contains("[always]") || s.contains("[madvise]");
            } catch (IOException | RuntimeException e) {
                return false;
            }
        }
    }

    /** {@code bytes} of zeroed memory aligned to at least {@code align} (a power of two up to 2 MiB), freed with {@code arena}. */
    public static MemorySegment allocate(Arena arena, long bytes, long align) {
        if (bytes <= 0 || !Libc.linux()) {
            return arena.allocate(Math.max(1, bytes), align);
        }
        MemorySegment m = map(arena, bytes);
        return m != null ? m : arena.allocate(bytes, align);
    }

    /** A mapping of {@code bytes} starting on a 2 MiB boundary, advised to huge pages; null where mmap refuses. */
    private static MemorySegment map(Arena arena, long bytes) {
        try {
            // room to start on a 2 MiB boundary; the whole mapping is unmapped at the end
            long size = bytes + PAGE;
            MemorySegment base = (MemorySegment) Libc.mmap().invokeExact(MemorySegment.NULL, size, Libc.PROT_READ_WRITE,
                    Libc.MAP_PRIVATE_ANONYMOUS | MAP_NORESERVE, -1, 0L);
            if (base.address() == -1L || base.address() == 0L) {
                return null;
            }
            MethodHandle munmap = Libc.munmap();
            MemorySegment whole = base.reinterpret(size, arena, s -> {
                try {
                    int ignored = (int) munmap.invokeExact(s, size);
                } catch (Throwable t) {
                    // nothing to do at close
                }
            });
            long start = (base.address() + PAGE - 1) & -PAGE;
            MemorySegment mem = whole.asSlice(start - base.address(), bytes);
            int ignored = (int) Libc.madvise().invokeExact(mem, bytes, Libc.MADV_HUGEPAGE); // refused: 4 KiB pages, still correct
            return mem;
        } catch (Throwable t) {
            return null;
        }
    }

    /**
     * Many allocations of one lifetime carved, 64-byte aligned, out of huge-page regions of {@code regionBytes} (or
     * one region for an allocation larger than that), freed together by {@link #close}. A region is reserved, not
     * committed ({@code MAP_NORESERVE}): only the pages an allocation touches take memory, so the unused end of a
     * region costs address space only.
     */
    public static final class Regions implements AutoCloseable {
        private final long regionBytes;
        private final Arena arena = Arena.ofShared();
        private MemorySegment current;
        private long used;
        private long handedOut;

        public Regions(long regionBytes) {
            if (regionBytes < PAGE) {
                throw new IllegalArgumentException("a region holds at least one huge page: " + regionBytes);
            }
            this.regionBytes = regionBytes;
        }

        /**
         * {@code bytes} of zeroed memory, 64-byte aligned, in a huge-page region (not Linux: on its own, since memory
         * that is not reserved would be committed whole).
         */
        public synchronized MemorySegment allocate(long bytes) {
            if (bytes <= 0) {
                throw new IllegalArgumentException("allocate at least one byte: " + bytes);
            }
            handedOut += bytes;
            if (!Libc.linux()) {
                return arena.allocate(bytes, 64);
            }
            long at = (used + 63) & -64L;
            if (current == null || at + bytes > current.byteSize()) {
                long size = Math.max(regionBytes, (bytes + PAGE - 1) & -PAGE);
                current = HugeMemory.allocate(arena, size, 64);
                at = 0;
            }
            used = at + bytes;
            return current.asSlice(at, bytes);
        }

        /** Bytes handed out so far. */
        public synchronized long bytes() {
            return handedOut;
        }

        /** Frees every allocation. */
        @Override
        public synchronized void close() {
            if (arena.scope().isAlive()) {
                arena.close();
            }
            current = null;
        }
    }
}
