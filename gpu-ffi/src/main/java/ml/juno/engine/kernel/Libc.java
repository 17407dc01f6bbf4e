package ml.juno.engine.kernel;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The few C library calls the engine makes itself: about memory and the page cache (the expert tier's
 * {@code moe.PageCache} and {@link HugeMemory}) and about cores ({@code kernel.cpu.ComputePool}), looked up once on
 * first use, each group in a holder of its own. Linux only: callers check {@link #linux()} first, and treat any
 * {@link Throwable} from a call (a symbol missing, the holder failing to initialise) as "not available here".
 */
public final class Libc {
    public static final int MADV_DONTNEED = 4;
    public static final int MADV_HUGEPAGE = 14;
    public static final int POSIX_FADV_DONTNEED = 4;
    public static final int O_RDONLY = 0;
    public static final int PROT_READ_WRITE = 0x1 | 0x2;
    public static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;

    private Libc() {}

    public static boolean linux() {
        return System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux");
    }

    /** {@code int madvise(void *addr, size_t length, int advice)} */
    public static MethodHandle madvise() {
        return Handles.MADVISE;
    }

    /** {@code void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)} */
    public static MethodHandle mmap() {
        return Handles.MMAP;
    }

    /** {@code int munmap(void *addr, size_t length)} */
    public static MethodHandle munmap() {
        return Handles.MUNMAP;
    }

    /** {@code int open(const char *path, int flags)} */
    public static MethodHandle open() {
        return Handles.OPEN;
    }

    /** {@code int posix_fadvise(int fd, off_t offset, off_t len, int advice)} */
    public static MethodHandle fadvise() {
        return Handles.FADVISE;
    }

    /** {@code int close(int fd)} */
    public static MethodHandle close() {
        return Handles.CLOSE;
    }

    /** {@code int sched_getcpu(void)}, a critical downcall (it neither blocks nor calls back). */
    public static MethodHandle schedGetcpu() {
        return Sched.GETCPU;
    }

    /** {@code int sched_getaffinity(pid_t pid, size_t cpusetsize, cpu_set_t *mask)} */
    public static MethodHandle schedGetaffinity() {
        return Sched.GETAFFINITY;
    }

    /** {@code int sched_setaffinity(pid_t pid, size_t cpusetsize, const cpu_set_t *mask)} */
    public static MethodHandle schedSetaffinity() {
        return Sched.SETAFFINITY;
    }

    private static final class Sched {
        static final MethodHandle GETCPU = handle("sched_getcpu", FunctionDescriptor.of(ValueLayout.JAVA_INT),
                Linker.Option.critical(false));
        static final MethodHandle GETAFFINITY = handle("sched_getaffinity",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
        static final MethodHandle SETAFFINITY = handle("sched_setaffinity",
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS));
    }

    private static final class Handles {
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
    }

    private static MethodHandle handle(String name, FunctionDescriptor d, Linker.Option... options) {
        Linker linker = Linker.nativeLinker();
        return linker.downcallHandle(linker.defaultLookup().findOrThrow(name), d, options);
    }
}
