package ml.juno.engine.moe;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Large anonymous memory asked to be backed by transparent huge pages where the kernel allows it ({@code mmap} then
 * {@code madvise(MADV_HUGEPAGE)} before the first touch, so a system whose THP mode is {@code madvise} gives 2 MiB
 * pages; the pages arrive zeroed, so nothing is written twice), unmapped when the arena closes. Where that is not
 * possible (not Linux, the calls refused) the arena allocates as usual. Streaming an expert's 3 MB through 4 KiB pages
 * walks a page table every 4 KiB; through 2 MiB pages hardly ever.
 */
final class HugeMemory {
    private static final long PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_HUGEPAGE = 14;
    private static final long HUGE = 2L << 20;

    private HugeMemory() {}

    /** {@code bytes} of zeroed memory aligned to at least {@code align} (a power of two up to 2 MiB), freed with {@code arena}. */
    static MemorySegment allocate(Arena arena, long bytes, long align) {
        if (bytes <= 0 || !Boolean.parseBoolean(System.getProperty("juno.experts.huge", "true"))
                || !System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return arena.allocate(Math.max(1, bytes), align);
        }
        try {
            Linker linker = Linker.nativeLinker();
            var libc = linker.defaultLookup();
            MethodHandle mmap = linker.downcallHandle(libc.findOrThrow("mmap"), FunctionDescriptor.of(ValueLayout.ADDRESS,
                    ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_LONG));
            MethodHandle madvise = linker.downcallHandle(libc.findOrThrow("madvise"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
            MethodHandle munmap = linker.downcallHandle(libc.findOrThrow("munmap"),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
            // room to start on a 2 MiB boundary; the whole mapping is unmapped at the end
            long size = bytes + HUGE;
            MemorySegment base = (MemorySegment) mmap.invokeExact(MemorySegment.NULL, size, (int) PROT_READ_WRITE,
                    MAP_PRIVATE_ANONYMOUS, -1, 0L);
            if (base.address() == -1L || base.address() == 0L) {
                return arena.allocate(bytes, align);
            }
            long start = (base.address() + HUGE - 1) & -HUGE;
            MemorySegment whole = base.reinterpret(size, arena, s -> {
                try {
                    int ignored = (int) munmap.invokeExact(s, size);
                } catch (Throwable t) {
                    // nothing to do at close
                }
            });
            MemorySegment mem = whole.asSlice(start - base.address(), bytes);
            int ignored = (int) madvise.invokeExact(mem, bytes, MADV_HUGEPAGE); // a refusal leaves 4 KiB pages: still correct
            return mem;
        } catch (Throwable t) {
            return arena.allocate(bytes, align);
        }
    }
}
