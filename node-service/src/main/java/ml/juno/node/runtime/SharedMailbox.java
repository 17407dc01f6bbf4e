package ml.juno.node.runtime;

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
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.Activations;

/**
 * A tensor rank's inbox in shared memory, for the ranks of its group that run on the same host: a file under
 * {@code /dev/shm} (owner-only) that the rank creates and maps, and that each peer on this host maps too and writes its
 * partials into, one region per sending rank, {@value #SLOTS} slots per region. A partial is copied in and then its
 * slot's tag (step and index) is published with a release store; the owner polls the tag with acquire loads. Nothing
 * crosses the network stack or a thread of the gRPC server, so an all-reduce between two ranks of one host costs
 * microseconds instead of the hundreds a loopback gRPC message costs (each a wake-up of an event loop on the sender's
 * and the receiver's core).
 *
 * <p>"Same host" means the same boot of the same kernel and the same network namespace (ranks in separate namespaces
 * are treated as separate hosts, as a multi-host test means them), and an owner process that is alive; a peer that
 * cannot map the inbox, a partial larger than a slot, or shared memory turned off ({@code JUNO_PEER_SHM=0}) use the
 * gRPC link as before. The owner's gRPC stream from each peer stays open (a hello opens it), so a peer that dies still
 * ends the wait at once with the reason.
 *
 * <p>Why {@value #SLOTS} slots are never overwritten while read: a rank writes partial {@code k+2} of a group only after
 * it has every peer's partial {@code k+1}, which each peer sends only after it has read every partial {@code k}. A
 * slot whose tag changes while it is copied is reported all the same, never used.
 */
final class SharedMailbox implements AutoCloseable {
    static final int SLOTS = 4;
    static final int MAX_INDEX = 1 << 16; // all-reduces per step a tag can number
    private static final long MAGIC = 0x314D48534F4E554AL; // "JUNOSHM1"
    static final long HEADER = 4096;
    static final long SLOT_HEAD = 64;
    static final long MAX_SLOT = 8L << 20;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final Path DIR = Path.of("/dev/shm");
    /** This host: a hash of the boot id and the network namespace; 0 where either cannot be read (shared memory off). */
    static final long HOST = host();

    private final Path path;
    private final Arena arena;
    private final MemorySegment seg;
    private final long slotBytes;
    private final int world;
    private final boolean owner;
    private final long inode;

    private SharedMailbox(Path path, Arena arena, MemorySegment seg, long slotBytes, int world, boolean owner, long inode) {
        this.path = path;
        this.arena = arena;
        this.seg = seg;
        this.slotBytes = slotBytes;
        this.world = world;
        this.owner = owner;
        this.inode = inode;
    }

    /** Whether ranks may use shared memory: on unless {@code juno.peer.shm} or {@code JUNO_PEER_SHM} says 0/false. */
    static boolean enabled() {
        return !switchedOff("juno.peer.shm", "JUNO_PEER_SHM") && HOST != 0 && Files.isDirectory(DIR) && Files.isWritable(DIR);
    }

    /** Whether system property {@code property}, or else environment variable {@code env}, says 0, false or off. */
    static boolean switchedOff(String property, String env) {
        String v = System.getProperty(property, System.getenv(env));
        return v != null && (v.equals("0") || v.equalsIgnoreCase("false") || v.equalsIgnoreCase("off"));
    }

    /** A slot for partials of up to {@code maxPayload} bytes, within {@value #MAX_SLOT} bytes (larger go by gRPC). */
    static long slotBytes(long maxPayload) {
        long want = SLOT_HEAD + Math.max(maxPayload, 1);
        return Math.min(MAX_SLOT, (want + 4095) / 4096 * 4096);
    }

    static Path pathOf(long group, int rank) {
        return DIR.resolve("juno-tp-" + Long.toHexString(group) + "-" + rank);
    }

    /** Creates and maps rank {@code rank}'s inbox (replacing one a dead process or an earlier load of this one left). */
    static SharedMailbox create(long group, int rank, int world, long slotBytes) throws IOException {
        Path p = pathOf(group, rank);
        Mapped m = createFile(p, MAGIC, world, rank, slotBytes, (long) world * SLOTS);
        return new SharedMailbox(p, m.arena(), m.seg(), slotBytes, world, true, inode(p));
    }

    /**
     * Maps the inbox of peer {@code rank}, or null where it is not on this host, not alive, of another shape, or not
     * there (yet).
     */
    static SharedMailbox attach(long group, int rank, int world) {
        Path p = pathOf(group, rank);
        Mapped m = attachFile(p, MAGIC, world, rank, (long) world * SLOTS);
        return m == null ? null : new SharedMailbox(p, m.arena(), m.seg(), m.slotBytes(), world, false, inode(p));
    }

    /** A file under {@code /dev/shm} mapped into its own arena. */
    record Mapped(Arena arena, MemorySegment seg) {
        /** The slot size its header gives. */
        long slotBytes() {
            return seg.get(ValueLayout.JAVA_LONG, 32);
        }
    }

    /**
     * Creates the owner-only file {@code p} (replacing one a dead process or an earlier load left) for {@code slots} slots
     * of {@code slotBytes} after a {@value #HEADER}-byte header, sparse (tmpfs takes pages only as slots are written), and
     * maps it. The header, the same for every kind of inbox: {@code magic} (published last, with a release store), the
     * owner's pid, {@link #HOST}, the ints {@code a} and {@code b}, the slot size.
     */
    static Mapped createFile(Path p, long magic, int a, int b, long slotBytes, long slots) throws IOException {
        sweep();
        Files.deleteIfExists(p);
        long size = HEADER + slots * slotBytes;
        Arena arena = Arena.ofShared();
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
            arena.close();
            Files.deleteIfExists(p);
            throw e;
        }
    }

    /**
     * Maps the file {@code p} that {@link #createFile} made, or null where it is not there, not of this host, its owner
     * is gone, or its header differs ({@code magic}, {@code a}, {@code b}, a size of {@code slots} slots).
     */
    static Mapped attachFile(Path p, long magic, int a, int b, long slots) {
        if (!Files.isRegularFile(p)) {
            return null;
        }
        Arena arena = Arena.ofShared();
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long size = ch.size();
            if (size < HEADER) {
                arena.close();
                return null;
            }
            MemorySegment seg = ch.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
            long slot = seg.get(ValueLayout.JAVA_LONG, 32);
            boolean ok = (long) LONG.getAcquire(seg, 0L) == magic
                    && seg.get(ValueLayout.JAVA_LONG, 16) == HOST
                    && seg.get(ValueLayout.JAVA_INT, 24) == a
                    && seg.get(ValueLayout.JAVA_INT, 28) == b
                    && slot > SLOT_HEAD && size == HEADER + slots * slot
                    && ProcessHandle.of(seg.get(ValueLayout.JAVA_LONG, 8)).map(ProcessHandle::isAlive).orElse(false);
            if (!ok) {
                arena.close();
                return null;
            }
            return new Mapped(arena, seg);
        } catch (IOException | RuntimeException e) {
            arena.close();
            return null;
        }
    }

    /** Whether this mapping is still the peer's inbox: the file is the one mapped and its owner is alive. */
    boolean current() {
        return inode(path) == inode && ProcessHandle.of(seg.get(ValueLayout.JAVA_LONG, 8)).map(ProcessHandle::isAlive).orElse(false);
    }

    private long slotAt(int fromRank, int index) {
        return HEADER + ((long) fromRank * SLOTS + index % SLOTS) * slotBytes;
    }

    private static long tag(long stepId, int index) {
        return stepId * MAX_INDEX + index + 1;
    }

    /** Whether the owner still reads this inbox: it marks it closed before it unmaps it (an unload, a reload). */
    boolean open() {
        return (long) LONG.getAcquire(seg, 0L) == MAGIC;
    }

    /** Whether a partial of {@code bytes} fits a slot and its step and index fit a tag. */
    boolean fits(long stepId, int index, int bytes) {
        return bytes <= slotBytes - SLOT_HEAD && index >= 0 && index < MAX_INDEX && stepId >= 0 && stepId < Long.MAX_VALUE / MAX_INDEX;
    }

    /** Writes partial {@code index} of step {@code stepId} from {@code fromRank} (a peer's mapping); see {@link #fits}. */
    void put(int fromRank, long stepId, int index, Activations a) {
        long at = slotAt(fromRank, index);
        byte[] data = a.data();
        MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_BYTE, at + SLOT_HEAD, data.length);
        seg.set(ValueLayout.JAVA_INT, at + 8, a.dtype().ordinal());
        seg.set(ValueLayout.JAVA_INT, at + 12, a.order() == ByteOrder.BIG_ENDIAN ? 1 : 0);
        seg.set(ValueLayout.JAVA_INT, at + 16, a.rows());
        seg.set(ValueLayout.JAVA_INT, at + 20, a.cols());
        seg.set(ValueLayout.JAVA_INT, at + 24, data.length);
        LONG.setRelease(seg, at, tag(stepId, index));
    }

    /** The owner's poll: peer {@code fromRank}'s partial {@code index} of step {@code stepId}, or null while not there. */
    Activations poll(int fromRank, long stepId, int index) {
        long at = slotAt(fromRank, index);
        long want = tag(stepId, index);
        if ((long) LONG.getAcquire(seg, at) != want) {
            return null;
        }
        int len = seg.get(ValueLayout.JAVA_INT, at + 24);
        if (len < 0 || len > slotBytes - SLOT_HEAD) {
            throw new IllegalStateException("shared-memory slot of rank " + fromRank + " holds a partial of " + len + " bytes");
        }
        int d = seg.get(ValueLayout.JAVA_INT, at + 8);
        if (d < 0 || d >= ActivationDtype.values().length) {
            throw new IllegalStateException("shared-memory slot of rank " + fromRank + " names wire dtype " + d);
        }
        ActivationDtype dtype = ActivationDtype.values()[d];
        ByteOrder order = seg.get(ValueLayout.JAVA_INT, at + 12) == 1 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        int rows = seg.get(ValueLayout.JAVA_INT, at + 16);
        int cols = seg.get(ValueLayout.JAVA_INT, at + 20);
        byte[] data = new byte[len];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, at + SLOT_HEAD, data, 0, len);
        VarHandle.acquireFence();
        if ((long) LONG.getAcquire(seg, at) != want) {
            throw new IllegalStateException("rank " + fromRank + " overwrote partial " + index + " of step " + stepId + " while it was read");
        }
        return new Activations(dtype, order, rows, cols, data);
    }

    @Override
    public void close() {
        if (owner) {
            LONG.setRelease(seg, 0L, 0L); // a peer that still has it mapped sends by gRPC and looks for the new one
        }
        arena.close();
        if (owner) {
            try {
                if (inode(path) == inode) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException ignored) {
                // /dev/shm is cleared at reboot; the next load of this rank replaces it
            }
        }
    }

    /** Removes the inboxes (tensor ranks' and pipeline stages' {@link StageRing}s) whose owner process is gone. */
    static int sweep() {
        int removed = 0;
        try (var files = Files.newDirectoryStream(DIR, "juno-{tp,pp}-*")) {
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
                if (pid > 0 && !ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
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

    static long inode(Path p) {
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

    int world() {
        return world;
    }
}
