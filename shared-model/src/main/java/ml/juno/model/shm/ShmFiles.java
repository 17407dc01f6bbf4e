package ml.juno.model.shm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The files under {@code /dev/shm} that Juno's processes on one host exchange data through (a tensor rank's inbox, a
 * pipeline stage's ring, a coordinator's control channel to a node): owner-only, sparse (tmpfs takes pages only as
 * slots are written), with one header layout, so that a process finds out whether a file is of this host, alive and of
 * the shape it expects before it maps it, and a sweep removes those whose owner died.
 *
 * <p>"This host" means the same boot of the same kernel and the same network namespace ({@link #HOST}): processes in
 * separate namespaces are treated as separate hosts, as a multi-host test means them.
 */
public final class ShmFiles {
    /** Bytes before the first slot: the header below, and room for the users' own counters (each on its own cache line). */
    public static final long HEADER = 4096;
    /** Bytes of a slot's own header before its payload. */
    public static final long SLOT_HEAD = 64;
    /** The largest slot. */
    public static final long MAX_SLOT = 8L << 20;
    /** This host: a hash of the boot id and the network namespace; 0 where either cannot be read (shared memory off). */
    public static final long HOST = host();
    public static final Path DIR = Path.of("/dev/shm");
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private ShmFiles() {}

    /** Whether files can be shared here: this host is known and {@code /dev/shm} is a writable folder. */
    public static boolean usable() {
        return HOST != 0 && Files.isDirectory(DIR) && Files.isWritable(DIR);
    }

    /** Whether system property {@code property}, or else environment variable {@code env}, says 0, false or off. */
    public static boolean switchedOff(String property, String env) {
        String v = System.getProperty(property, System.getenv(env));
        return v != null && (v.equals("0") || v.equalsIgnoreCase("false") || v.equalsIgnoreCase("off"));
    }

    /** A slot for payloads of up to {@code maxPayload} bytes, whole pages, within {@link #MAX_SLOT}. */
    public static long slotBytes(long maxPayload) {
        long want = SLOT_HEAD + Math.max(maxPayload, 1);
        return Math.min(MAX_SLOT, (want + 4095) / 4096 * 4096);
    }

    /** A file under {@code /dev/shm} mapped into an arena. */
    public record Mapped(Arena arena, MemorySegment seg) {
        /** The slot size its header gives. */
        public long slotBytes() {
            return seg.get(ValueLayout.JAVA_LONG, 32);
        }

        /** The pid of the process that created it. */
        public long ownerPid() {
            return seg.get(ValueLayout.JAVA_LONG, 8);
        }
    }

    /**
     * Creates the owner-only file {@code p} (replacing one a dead process or an earlier load left) for {@code slots} slots
     * of {@code slotBytes} after a {@value #HEADER}-byte header, sparse, and maps it into {@code arena} (closed here on
     * failure, where it can be). The header: {@code magic} (published last, with a release store), the owner's pid,
     * {@link #HOST}, the ints {@code a} and {@code b}, the slot size.
     */
    public static Mapped createFile(Path p, Arena arena, long magic, int a, int b, long slotBytes, long slots) throws IOException {
        sweep();
        Files.deleteIfExists(p);
        long size = HEADER + slots * slotBytes;
        try (FileChannel ch = FileChannel.open(p, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            ch.truncate(size);
            ch.write(java.nio.ByteBuffer.allocate(1), size - 1);
            MemorySegment seg = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            seg.set(ValueLayout.JAVA_LONG, 8, ProcessHandle.current().pid());
            seg.set(ValueLayout.JAVA_LONG, 16, HOST);
            seg.set(ValueLayout.JAVA_INT, 24, a);
            seg.set(ValueLayout.JAVA_INT, 28, b);
            seg.set(ValueLayout.JAVA_LONG, 32, slotBytes);
            LONG.setRelease(seg, 0L, magic);
            return new Mapped(arena, seg);
        } catch (IOException | RuntimeException e) {
            close(arena);
            Files.deleteIfExists(p);
            throw e;
        }
    }

    /**
     * Maps the file {@code p} that {@link #createFile} made into {@code arena}, or null (the arena closed, where it can
     * be) where it is not there, not of this host, its owner is gone, or its header differs ({@code magic}, {@code a},
     * {@code b}, a size of {@code slots} slots).
     */
    public static Mapped attachFile(Path p, Arena arena, long magic, int a, int b, long slots) {
        if (!Files.isRegularFile(p)) {
            close(arena);
            return null;
        }
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            if (size < HEADER) {
                close(arena);
                return null;
            }
            MemorySegment seg = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            long slot = seg.get(ValueLayout.JAVA_LONG, 32);
            boolean ok = (long) LONG.getAcquire(seg, 0L) == magic
                    && seg.get(ValueLayout.JAVA_LONG, 16) == HOST
                    && seg.get(ValueLayout.JAVA_INT, 24) == a
                    && seg.get(ValueLayout.JAVA_INT, 28) == b
                    && slot > SLOT_HEAD && size == HEADER + slots * slot
                    && alive(seg.get(ValueLayout.JAVA_LONG, 8));
            if (!ok) {
                close(arena);
                return null;
            }
            return new Mapped(arena, seg);
        } catch (IOException | RuntimeException e) {
            close(arena);
            return null;
        }
    }

    /** Closes {@code arena} where it can be closed (an automatic arena is left to the collector). */
    public static void close(Arena arena) {
        try {
            arena.close();
        } catch (UnsupportedOperationException automatic) {
            // unmapped once unreachable
        }
    }

    /** Whether process {@code pid} is alive (the owner of a file, by the pid in its header). */
    public static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /** Removes Juno's files (tensor inboxes, stage rings, control channels) whose owner process is gone. */
    public static int sweep() {
        int removed = 0;
        try (var files = Files.newDirectoryStream(DIR, "juno-{tp,pp,cx}-*")) {
            for (Path f : files) {
                long pid = -1;
                try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
                    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16).order(ByteOrder.nativeOrder());
                    if (ch.read(b, 0) == 16) {
                        pid = b.getLong(8);
                    }
                } catch (IOException e) {
                    continue; // another user's, or gone already
                }
                if (pid > 0 && !alive(pid)) {
                    try {
                        Files.deleteIfExists(f);
                        removed++;
                    } catch (IOException ignored) {
                        // not ours to remove
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // nothing to sweep
        }
        return removed;
    }

    /** The file's inode number, or -1 where it is gone. */
    public static long inode(Path p) {
        try {
            return ((Number) Files.getAttribute(p, "unix:ino")).longValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long host() {
        try {
            String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
            String net = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
            long h = 1125899906842597L;
            for (char c : (boot + "|" + net).toCharArray()) {
                h = 31 * h + c;
            }
            return h == 0 ? 1 : h;
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
