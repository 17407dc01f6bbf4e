package ml.juno.model.shm;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Linux futexes on a 32-bit word of shared memory, through libc's {@code syscall} (FFM; no native library of ours
 * needed): a thread of one process sleeps on the word until a thread of another process that changed it wakes it, one
 * wake-up and no thread in between, where a loopback gRPC message wakes an event loop on each side and the thread
 * that waits. The futexes are shared ones (no {@code FUTEX_PRIVATE_FLAG}), keyed by the mapped file's page, so the
 * word must lie in a {@code MAP_SHARED} mapping. {@link #AVAILABLE} is false off Linux on x86-64 and AArch64, or
 * where the call fails (a seccomp filter); callers then keep to gRPC.
 */
public final class Futex {
    private static final int FUTEX_WAIT = 0;
    private static final int FUTEX_WAKE = 1;
    private static final MethodHandle SYSCALL_WAIT;
    private static final MethodHandle SYSCALL_WAKE;
    private static final long SYS_FUTEX;
    public static final boolean AVAILABLE;

    static {
        String arch = System.getProperty("os.arch", "");
        long nr = arch.equals("amd64") || arch.equals("x86_64") ? 202 : arch.equals("aarch64") ? 98 : -1;
        MethodHandle wait = null;
        MethodHandle wake = null;
        boolean ok = false;
        if (nr > 0 && System.getProperty("os.name", "").equals("Linux")) {
            try {
                Linker linker = Linker.nativeLinker();
                MemorySegment syscall = linker.defaultLookup().find("syscall").orElseThrow();
                // long syscall(long nr, ...): every variadic argument passed as a full register (long or pointer)
                wait = linker.downcallHandle(syscall, FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS), Linker.Option.firstVariadicArg(1));
                wake = linker.downcallHandle(syscall, FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                        ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG), Linker.Option.firstVariadicArg(1));
                try (Arena a = Arena.ofConfined()) {
                    MemorySegment word = a.allocate(ValueLayout.JAVA_INT);
                    MemorySegment ts = a.allocate(16);
                    ts.set(ValueLayout.JAVA_LONG, 8, 1_000L);
                    long woken = (long) wake.invokeExact(nr, word, (long) FUTEX_WAKE, 1L);
                    long waited = (long) wait.invokeExact(nr, word, (long) FUTEX_WAIT, 1L, ts); // the word is 0: returns at once
                    ok = woken == 0 && waited == -1;
                }
            } catch (Throwable t) {
                ok = false;
            }
        }
        SYS_FUTEX = nr;
        SYSCALL_WAIT = wait;
        SYSCALL_WAKE = wake;
        AVAILABLE = ok;
    }

    private Futex() {}

    /**
     * Sleeps while the word at {@code word} still holds {@code expected}, at most {@code nanos} (and never past a wake-up,
     * a signal or a spurious return: callers look again and wait again). {@code timespec} is 16 bytes of the caller's
     * scratch, owned by the calling thread.
     */
    public static void await(MemorySegment word, int expected, long nanos, MemorySegment timespec) {
        timespec.set(ValueLayout.JAVA_LONG, 0, nanos / 1_000_000_000L);
        timespec.set(ValueLayout.JAVA_LONG, 8, nanos % 1_000_000_000L);
        try {
            long unused = (long) SYSCALL_WAIT.invokeExact(SYS_FUTEX, word, (long) FUTEX_WAIT, (long) expected, timespec); // 0, or -1: woken, changed, timed out, interrupted
        } catch (Throwable t) {
            throw new IllegalStateException("futex wait failed", t);
        }
    }

    /** Wakes the threads (of any process) sleeping on the word at {@code word}. */
    public static void wakeAll(MemorySegment word) {
        try {
            long unused = (long) SYSCALL_WAKE.invokeExact(SYS_FUTEX, word, (long) FUTEX_WAKE, (long) Integer.MAX_VALUE); // how many woke
        } catch (Throwable t) {
            throw new IllegalStateException("futex wake failed", t);
        }
    }
}
