package ml.juno.engine.moe;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import ml.juno.engine.kernel.Libc;

/**
 * Large anonymous memory asked to be backed by transparent huge pages where the kernel allows it ({@code mmap} then
 * {@code madvise(MADV_HUGEPAGE)} before the first touch, so a system whose THP mode is {@code madvise} gives 2 MiB
 * pages; the pages arrive zeroed, so nothing is written twice), unmapped when the arena closes. Where that is not
 * possible (not Linux, the calls refused) the arena allocates as usual. Streaming an expert's 3 MB through 4 KiB pages
 * walks a page table every 4 KiB; through 2 MiB pages hardly ever.
 */
final class HugeMemory {
    private static final long HUGE = 2L << 20;

    private HugeMemory() {}

    /** {@code bytes} of zeroed memory aligned to at least {@code align} (a power of two up to 2 MiB), freed with {@code arena}. */
    static MemorySegment allocate(Arena arena, long bytes, long align) {
        if (bytes <= 0 || !Boolean.parseBoolean(System.getProperty("juno.experts.huge", "true")) || !Libc.linux()) {
            return arena.allocate(Math.max(1, bytes), align);
        }
        try {
            // room to start on a 2 MiB boundary; the whole mapping is unmapped at the end
            long size = bytes + HUGE;
            MemorySegment base = (MemorySegment) Libc.mmap().invokeExact(MemorySegment.NULL, size, Libc.PROT_READ_WRITE,
                    Libc.MAP_PRIVATE_ANONYMOUS, -1, 0L);
            if (base.address() == -1L || base.address() == 0L) {
                return arena.allocate(bytes, align);
            }
            MethodHandle munmap = Libc.munmap();
            MemorySegment whole = base.reinterpret(size, arena, s -> {
                try {
                    int ignored = (int) munmap.invokeExact(s, size);
                } catch (Throwable t) {
                    // nothing to do at close
                }
            });
            long start = (base.address() + HUGE - 1) & -HUGE;
            MemorySegment mem = whole.asSlice(start - base.address(), bytes);
            int ignored = (int) Libc.madvise().invokeExact(mem, bytes, Libc.MADV_HUGEPAGE); // refused: 4 KiB pages, still correct
            return mem;
        } catch (Throwable t) {
            return arena.allocate(bytes, align);
        }
    }
}
