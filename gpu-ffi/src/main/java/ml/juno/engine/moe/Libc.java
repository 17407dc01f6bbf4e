package ml.juno.engine.moe;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The few C library calls the expert tier makes about memory and the page cache ({@link PageCache}, {@link HugeMemory}),
 * looked up once on first use. Linux only: callers check {@link #linux()} first, and treat any {@link Throwable} from
 * a call (a symbol missing, the holder failing to initialise) as "not available here".
 */
final class Libc {
    static final int MADV_DONTNEED = 4;
    static final int MADV_HUGEPAGE = 14;
    static final int POSIX_FADV_DONTNEED = 4;
    static final int O_RDONLY = 0;
    static final int PROT_READ_WRITE = 0x1 | 0x2;
    static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;

    private Libc() {}

    static boolean linux() {
        return System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux");
    }

    /** {@code int madvise(void *addr, size_t length, int advice)} */
    static MethodHandle madvise() {
        return Handles.MADVISE;
    }

    /** {@code void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)} */
    static MethodHandle mmap() {
        return Handles.MMAP;
    }

    /** {@code int munmap(void *addr, size_t length)} */
    static MethodHandle munmap() {
        return Handles.MUNMAP;
    }

    /** {@code int open(const char *path, int flags)} */
    static MethodHandle open() {
        return Handles.OPEN;
    }

    /** {@code int posix_fadvise(int fd, off_t offset, off_t len, int advice)} */
    static MethodHandle fadvise() {
        return Handles.FADVISE;
    }

    /** {@code int close(int fd)} */
    static MethodHandle close() {
        return Handles.CLOSE;
    }

    private static final class Handles {
        private static final Linker LINKER = Linker.nativeLinker();
        private static final SymbolLookup C = LINKER.defaultLookup();
        static final MethodHandle MADVISE = handle("madvise",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        static final MethodHandle MMAP = handle("mmap", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
                ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        static final MethodHandle MUNMAP = handle("munmap",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
        static final MethodHandle OPEN = handle("open",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        static final MethodHandle FADVISE = handle("posix_fadvise", FunctionDescriptor.of(ValueLayout.JAVA_INT,
                ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));
        static final MethodHandle CLOSE = handle("close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

        private static MethodHandle handle(String name, FunctionDescriptor d) {
            return LINKER.downcallHandle(C.findOrThrow(name), d);
        }
    }
}
