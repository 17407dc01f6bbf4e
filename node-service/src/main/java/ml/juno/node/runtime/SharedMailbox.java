package ml.juno.node.runtime;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import ml.juno.model.shm.ShmFiles;
import ml.juno.model.wire.ActivationCodec;
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
    static final long HEADER = ShmFiles.HEADER;
    static final long SLOT_HEAD = ShmFiles.SLOT_HEAD;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final ActivationDtype[] DTYPES = ActivationDtype.values(); // values() copies its array every call

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
        return !ShmFiles.switchedOff("juno.peer.shm", "JUNO_PEER_SHM") && ShmFiles.usable();
    }

    static Path pathOf(long group, int rank) {
        return ShmFiles.DIR.resolve("juno-tp-" + Long.toHexString(group) + "-" + rank);
    }

    /** Creates and maps rank {@code rank}'s inbox (replacing one a dead process or an earlier load of this one left). */
    static SharedMailbox create(long group, int rank, int world, long slotBytes) throws IOException {
        Path p = pathOf(group, rank);
        ShmFiles.Mapped m = ShmFiles.createFile(p, Arena.ofShared(), MAGIC, world, rank, slotBytes, (long) world * SLOTS);
        return new SharedMailbox(p, m.arena(), m.seg(), slotBytes, world, true, ShmFiles.inode(p));
    }

    /**
     * Maps the inbox of peer {@code rank}, or null where it is not on this host, not alive, of another shape, or not
     * there (yet).
     */
    static SharedMailbox attach(long group, int rank, int world) {
        Path p = pathOf(group, rank);
        ShmFiles.Mapped m = ShmFiles.attachFile(p, Arena.ofShared(), MAGIC, world, rank, (long) world * SLOTS);
        return m == null ? null : new SharedMailbox(p, m.arena(), m.seg(), m.slotBytes(), world, false, ShmFiles.inode(p));
    }

    /** Whether this mapping is still the peer's inbox: the file is the one mapped and its owner is alive. */
    boolean current() {
        return ShmFiles.inode(path) == inode && ShmFiles.alive(seg.get(ValueLayout.JAVA_LONG, 8));
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

    /**
     * Writes partial {@code index} of step {@code stepId} from {@code fromRank} (a peer's mapping; see {@link #fits}):
     * the first {@code length} bytes of {@code data}, encoded as {@code dtype} in {@code order}.
     */
    void put(int fromRank, long stepId, int index, ActivationDtype dtype, ByteOrder order, int rows, int cols, byte[] data, int length) {
        long at = slotAt(fromRank, index);
        MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_BYTE, at + SLOT_HEAD, length);
        seg.set(ValueLayout.JAVA_INT, at + 8, dtype.ordinal());
        seg.set(ValueLayout.JAVA_INT, at + 12, order == ByteOrder.BIG_ENDIAN ? 1 : 0);
        seg.set(ValueLayout.JAVA_INT, at + 16, rows);
        seg.set(ValueLayout.JAVA_INT, at + 20, cols);
        seg.set(ValueLayout.JAVA_INT, at + 24, length);
        LONG.setRelease(seg, at, tag(stepId, index));
    }

    /**
     * A peer's partial as received: read out of a slot into memory kept for the next ({@link #pollInto}), or the bytes
     * of one that came by gRPC ({@link #of}); its header and {@code length} bytes.
     */
    static final class Received {
        ActivationDtype dtype;
        ByteOrder order;
        int rows;
        int cols;
        int length;
        byte[] bytes;
        private byte[] own = new byte[0];

        /** This holder showing {@code a} (its bytes, not copied). */
        Received of(Activations a) {
            dtype = a.dtype();
            order = a.order();
            rows = a.rows();
            cols = a.cols();
            bytes = a.data();
            length = bytes.length;
            return this;
        }

        /** Decodes it into {@code dst[offset ..]}. */
        void decode(float[] dst, int offset) {
            ActivationCodec.of(dtype, order).decode(bytes, length, rows, cols, dst, offset);
        }

        boolean hasShape(int rows, int cols) {
            return this.rows == rows && this.cols == cols;
        }
    }

    /**
     * The owner's poll without allocating (but to grow {@code into}'s buffer): peer {@code fromRank}'s partial
     * {@code index} of step {@code stepId} copied into {@code into}; false while not there.
     */
    boolean pollInto(int fromRank, long stepId, int index, Received into) {
        long at = slotAt(fromRank, index);
        long want = tag(stepId, index);
        if ((long) LONG.getAcquire(seg, at) != want) {
            return false;
        }
        int len = seg.get(ValueLayout.JAVA_INT, at + 24);
        if (len < 0 || len > slotBytes - SLOT_HEAD) {
            throw new IllegalStateException("shared-memory slot of rank " + fromRank + " holds a partial of " + len + " bytes");
        }
        int d = seg.get(ValueLayout.JAVA_INT, at + 8);
        if (d < 0 || d >= DTYPES.length) {
            throw new IllegalStateException("shared-memory slot of rank " + fromRank + " names wire dtype " + d);
        }
        ActivationDtype dtype = DTYPES[d];
        ByteOrder order = seg.get(ValueLayout.JAVA_INT, at + 12) == 1 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        int rows = seg.get(ValueLayout.JAVA_INT, at + 16);
        int cols = seg.get(ValueLayout.JAVA_INT, at + 20);
        if (rows < 0 || cols < 0 || dtype.encodedBytes(rows, cols) != len) {
            throw new IllegalStateException("shared-memory slot of rank " + fromRank + " holds " + len + " bytes for a "
                    + dtype + " partial of shape [" + rows + ", " + cols + "]");
        }
        if (into.own.length < len) {
            into.own = new byte[len];
        }
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, at + SLOT_HEAD, into.own, 0, len);
        VarHandle.acquireFence();
        if ((long) LONG.getAcquire(seg, at) != want) {
            throw new IllegalStateException("rank " + fromRank + " overwrote partial " + index + " of step " + stepId + " while it was read");
        }
        into.bytes = into.own;
        into.dtype = dtype;
        into.order = order;
        into.rows = rows;
        into.cols = cols;
        into.length = len;
        return true;
    }

    @Override
    public void close() {
        if (owner) {
            LONG.setRelease(seg, 0L, 0L); // a peer that still has it mapped sends by gRPC and looks for the new one
        }
        arena.close();
        if (owner) {
            try {
                if (ShmFiles.inode(path) == inode) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException ignored) {
                // /dev/shm is cleared at reboot; the next load of this rank replaces it
            }
        }
    }

    int world() {
        return world;
    }
}
