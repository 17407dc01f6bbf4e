package ml.juno.node.runtime;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import ml.juno.model.shm.Futex;
import ml.juno.model.shm.ShmFiles;
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.Activations;

/**
 * A pipeline stage's inbox in shared memory for the rows of the stage before it, when both run on this host: a ring of
 * {@value #SLOTS} slots in a file under {@code /dev/shm} (owner-only) that the receiving stage creates and the sending
 * stage maps. One writer (the previous stage's inference thread) and one reader (this stage's): the writer copies a
 * message into slot {@code published % SLOTS}, publishes the count with a release store and rings the bell, a futex
 * word the reader sleeps on while it has nothing ({@link Futex}); the reader copies the message out and publishes how
 * many it consumed, which is how the writer knows a slot is free. A full ring, a message larger than a slot, or a
 * stage on another host go by gRPC as before, and the reader takes a step's rows from whichever path brought them
 * ({@link StageLink}). The gRPC stream from the previous stage stays open, so its end (the stage died) still ends a
 * wait at once: the gRPC thread that learns of it rings the bell too.
 *
 * <p>"This host" as for {@link SharedMailbox}: the same boot and network namespace, and an owner process that is alive.
 */
final class StageRing implements AutoCloseable {
    static final int SLOTS = 8;
    private static final long MAGIC = 0x3152505F4F4E554AL; // "JUNO_PR1"
    private static final long HEADER = ShmFiles.HEADER;
    private static final long BELL = 64;        // int, the futex word; its own cache line
    private static final long PUBLISHED = 128;  // long: messages written
    private static final long CONSUMED = 192;   // long: messages read
    private static final long SLOT_HEAD = ShmFiles.SLOT_HEAD;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();

    private final Path path;
    private final Arena arena;
    private final MemorySegment seg;
    private final MemorySegment bell;
    private final long slotBytes;
    private final boolean owner;
    private final long inode;
    private final long ownerPid;
    private final MemorySegment timespec; // the reader's scratch for futex waits
    private long messages;                // the writer's count of messages written (or the reader's of consumed)

    private StageRing(Path path, Arena arena, MemorySegment seg, long slotBytes, boolean owner, long inode) {
        this.path = path;
        this.arena = arena;
        this.seg = seg;
        this.bell = seg.asSlice(BELL, 4);
        this.slotBytes = slotBytes;
        this.owner = owner;
        this.inode = inode;
        this.ownerPid = seg.get(ValueLayout.JAVA_LONG, 8);
        this.timespec = owner ? arena.allocate(16, 8) : null;
        this.messages = (long) LONG.getAcquire(seg, owner ? CONSUMED : PUBLISHED);
    }

    /**
     * Whether a node's stages use their rings (where {@link #enabled()}): unless turned off ({@code juno.stage.shm} or
     * {@code JUNO_STAGE_SHM} 0/false/off). Session 23 had them off by default: the woken stage started while the previous
     * stage's compute workers still spun on the other core, and gRPC's slower hop hid that. Since a node's workers park
     * when its step is done ({@code Backend.rest}), the ring is the faster path (docs/performance.md, session 24).
     */
    static boolean wanted() {
        return !ShmFiles.switchedOff("juno.stage.shm", "JUNO_STAGE_SHM");
    }

    /** Whether stages may use shared memory: {@link SharedMailbox#enabled()} and futexes that work here. */
    static boolean enabled() {
        return Futex.AVAILABLE && SharedMailbox.enabled();
    }

    static Path pathOf(long group, int stage) {
        return ShmFiles.DIR.resolve("juno-pp-" + Long.toHexString(group) + "-" + stage);
    }

    /** Creates and maps stage {@code stage}'s inbox (replacing one a dead process or an earlier load of this one left). */
    static StageRing create(long group, int stage, long maxPayload) throws IOException {
        long slotBytes = ShmFiles.slotBytes(maxPayload);
        Path p = pathOf(group, stage);
        ShmFiles.Mapped m = ShmFiles.createFile(p, Arena.ofShared(), MAGIC, stage, SLOTS, slotBytes, SLOTS);
        return new StageRing(p, m.arena(), m.seg(), slotBytes, true, ShmFiles.inode(p));
    }

    /** Maps the inbox of stage {@code stage}, or null where it is not on this host, not alive, of another shape, or not there. */
    static StageRing attach(long group, int stage) {
        Path p = pathOf(group, stage);
        ShmFiles.Mapped m = ShmFiles.attachFile(p, Arena.ofShared(), MAGIC, stage, SLOTS, SLOTS);
        return m == null ? null : new StageRing(p, m.arena(), m.seg(), m.slotBytes(), false, ShmFiles.inode(p));
    }

    /** Whether this mapping is still the stage's inbox: the file is the one mapped and its owner is alive. */
    boolean current() {
        return ShmFiles.inode(path) == inode && ShmFiles.alive(ownerPid);
    }

    /** Whether the owner still reads this ring: it marks it closed before it unmaps it (an unload, a reload). */
    boolean open() {
        return (long) LONG.getAcquire(seg, 0L) == MAGIC;
    }

    private long slotAt(long n) {
        return HEADER + (n % SLOTS) * slotBytes;
    }

    /**
     * The writer: puts message {@code index} of step {@code stepId} into the ring and wakes the reader; false (nothing
     * written) when it does not fit a slot or the reader has {@value #SLOTS} messages still unread.
     */
    boolean offer(long stepId, int index, Activations a) {
        byte[] data = a.data();
        if (!open() || data.length > slotBytes - SLOT_HEAD || messages - (long) LONG.getAcquire(seg, CONSUMED) >= SLOTS) {
            return false;
        }
        long at = slotAt(messages);
        MemorySegment.copy(data, 0, seg, ValueLayout.JAVA_BYTE, at + SLOT_HEAD, data.length);
        seg.set(ValueLayout.JAVA_LONG, at, stepId);
        seg.set(ValueLayout.JAVA_INT, at + 8, index);
        seg.set(ValueLayout.JAVA_INT, at + 12, a.dtype().ordinal());
        seg.set(ValueLayout.JAVA_INT, at + 16, a.order() == ByteOrder.BIG_ENDIAN ? 1 : 0);
        seg.set(ValueLayout.JAVA_INT, at + 20, a.rows());
        seg.set(ValueLayout.JAVA_INT, at + 24, a.cols());
        seg.set(ValueLayout.JAVA_INT, at + 28, data.length);
        messages++;
        LONG.setRelease(seg, PUBLISHED, messages);
        ring();
        return true;
    }

    /**
     * Rings the bell: a reader asleep on it wakes and looks again (after a message was published, or by this process's
     * gRPC thread when rows or the end of a stream came that way).
     */
    void ring() {
        INT.getAndAdd(seg, BELL, 1);
        Futex.wakeAll(bell);
    }

    /** The reader: the bell's count now; read before looking for a message, then passed to {@link #sleep}. */
    int bell() {
        return (int) INT.getAcquire(seg, BELL);
    }

    /** The reader: sleeps at most {@code nanos} unless the bell rang since it read {@code seen}. */
    void sleep(int seen, long nanos) {
        Futex.await(bell, seen, nanos, timespec);
    }

    /**
     * The reader: message {@code index} of step {@code stepId}, or null while the ring has none for it. Messages of earlier
     * steps (left over from a step that failed) are consumed and skipped; a later one is left for its own wait (the
     * wanted one may still come by gRPC).
     */
    Activations poll(long stepId, int index) {
        long published = (long) LONG.getAcquire(seg, PUBLISHED);
        while (messages < published) {
            long at = slotAt(messages);
            long step = seg.get(ValueLayout.JAVA_LONG, at);
            int idx = seg.get(ValueLayout.JAVA_INT, at + 8);
            if (step > stepId || (step == stepId && idx > index)) {
                return null;
            }
            Activations a = step == stepId ? read(at) : null;
            messages++;
            LONG.setRelease(seg, CONSUMED, messages);
            if (a != null) {
                return a;
            }
        }
        return null;
    }

    private Activations read(long at) {
        int len = seg.get(ValueLayout.JAVA_INT, at + 28);
        if (len < 0 || len > slotBytes - SLOT_HEAD) {
            throw new IllegalStateException("the previous stage's shared-memory slot holds " + len + " bytes");
        }
        int d = seg.get(ValueLayout.JAVA_INT, at + 12);
        if (d < 0 || d >= ActivationDtype.values().length) {
            throw new IllegalStateException("the previous stage's shared-memory slot names wire dtype " + d);
        }
        ByteOrder order = seg.get(ValueLayout.JAVA_INT, at + 16) == 1 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN;
        byte[] data = new byte[len];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, at + SLOT_HEAD, data, 0, len);
        return new Activations(ActivationDtype.values()[d], order, seg.get(ValueLayout.JAVA_INT, at + 20),
                seg.get(ValueLayout.JAVA_INT, at + 24), data);
    }

    /**
     * Unmaps the ring (and removes the file, its owner). A thread inside a futex call on it holds the mapping for at most
     * that call (a wait sleeps 20 ms at most): closing tries again until it is out.
     */
    @Override
    public void close() {
        if (owner) {
            LONG.setRelease(seg, 0L, 0L); // a writer that still has it mapped sends by gRPC and looks for the new one
        }
        for (int tries = 0; ; tries++) {
            try {
                arena.close();
                break;
            } catch (IllegalStateException inUse) {
                if (!arena.scope().isAlive() || tries >= 200) {
                    break; // closed already, or a call that never returns: the mapping goes with the process
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        if (owner) {
            try {
                if (ShmFiles.inode(path) == inode) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException ignored) {
                // /dev/shm is cleared at reboot; the next load of this stage replaces it
            }
        }
    }
}
