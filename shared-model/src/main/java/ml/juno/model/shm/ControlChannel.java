package ml.juno.model.shm;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;

/**
 * A coordinator's step messages to one node on its own host and the node's answers, through shared memory instead of
 * the gRPC stream: a file under {@code /dev/shm} that the coordinator creates and the node maps, holding two rings of
 * {@value #SLOTS} slots, one each way, each with one writer and one reader. A message is copied into slot
 * {@code published % SLOTS}, the count published with a release store, and the reader woken through the ring's bell, a
 * futex word it sleeps on while it has nothing ({@link Futex}); the reader copies the message out and publishes how many
 * it consumed, which is how the writer knows a slot is free. A message larger than a slot goes in a file of its own next
 * to the channel, which the slot names and the reader removes. Each side marks the channel closed when it leaves and
 * wakes the other.
 *
 * <p>Per token, a gRPC message on loopback wakes an event loop on each side and then the thread that waits; this wakes
 * the waiting thread only. The gRPC stream stays open beside it: it carries the attach, and its end still tells either
 * side that the other is gone.
 */
public final class ControlChannel {
    public static final int SLOTS = 16;
    private static final long MAGIC = 0x3158435F4F4E554AL; // "JUNO_CX1"
    private static final int VERSION = 1;
    private static final long SLOT_BYTES = 256 * 1024;
    /** Each ring's counters, on cache lines of their own: the bell (int), messages published, messages consumed. */
    private static final long[] RING_AT = {64, 256};
    /** Each side's "gone" word: the coordinator's, the node's. */
    private static final long[] GONE_AT = {448, 512};
    private static final long SPIN_NANOS = 30_000L;
    private static final long MAX_SLEEP_NANOS = 20_000_000L;
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final Pattern NAME = Pattern.compile("juno-cx-[0-9a-f]{1,16}-[0-9a-f]{1,16}");
    private static final Pattern LARGE_NAME = Pattern.compile("juno-cxm-[0-9a-f]{1,16}-[0-9a-f]{1,16}");
    private static final AtomicLong NEXT = new AtomicLong(System.nanoTime() & 0xFFFFFFL);

    private final Path path;
    private final MemorySegment seg;
    private final boolean owner; // the coordinator's side
    private final long inode;
    private final int in;       // the ring this side reads
    private final int out;      // the ring this side writes
    private final MemorySegment inBell;
    private final MemorySegment outBell;
    private final MemorySegment timespec;
    private final Object writeLock = new Object();
    private long written;       // messages this side published (under writeLock)
    private long read;          // messages this side consumed (its one reader's)
    private volatile boolean closed; // this side left

    private ControlChannel(Path path, MemorySegment seg, boolean owner, long inode, Arena arena) {
        this.path = path;
        this.seg = seg;
        this.owner = owner;
        this.inode = inode;
        this.in = owner ? 1 : 0;
        this.out = owner ? 0 : 1;
        this.inBell = seg.asSlice(RING_AT[in], 4);
        this.outBell = seg.asSlice(RING_AT[out], 4);
        this.timespec = arena.allocate(16, 8);
        this.written = (long) LONG.getAcquire(seg, RING_AT[out] + 64);
        this.read = (long) LONG.getAcquire(seg, RING_AT[in] + 128);
    }

    /**
     * Whether channels may be used here: futexes work, {@code /dev/shm} is usable, and neither {@code juno.control.shm}
     * nor {@code JUNO_CONTROL_SHM} says 0, false or off.
     */
    public static boolean usable() {
        return Futex.AVAILABLE && ShmFiles.usable() && !ShmFiles.switchedOff("juno.control.shm", "JUNO_CONTROL_SHM");
    }

    /** The coordinator: creates a channel for one node's step stream. */
    public static ControlChannel create() throws IOException {
        Path p = ShmFiles.DIR.resolve("juno-cx-" + Long.toHexString(ProcessHandle.current().pid()) + "-" + Long.toHexString(NEXT.incrementAndGet()));
        Arena arena = Arena.ofAuto(); // unmapped once unreachable: no thread can be inside a futex call on an unmapped word
        ShmFiles.Mapped m = ShmFiles.createFile(p, arena, MAGIC, VERSION, SLOTS, SLOT_BYTES, 2L * SLOTS);
        return new ControlChannel(p, m.seg(), true, ShmFiles.inode(p), arena);
    }

    /**
     * The node: maps the channel a coordinator named, or null where the name is not one of ours, {@code host} is not this
     * host, the file is not there, its owner is gone, or it is of another shape.
     */
    public static ControlChannel attach(String name, long host) {
        if (!usable() || host != ShmFiles.HOST || name == null || !NAME.matcher(name).matches()) {
            return null;
        }
        Path p = ShmFiles.DIR.resolve(name);
        Arena arena = Arena.ofAuto();
        ShmFiles.Mapped m = ShmFiles.attachFile(p, arena, MAGIC, VERSION, SLOTS, 2L * SLOTS);
        return m == null ? null : new ControlChannel(p, m.seg(), false, ShmFiles.inode(p), arena);
    }

    /** The file's name under {@code /dev/shm}, which the coordinator sends the node. */
    public String name() {
        return path.getFileName().toString();
    }

    private long slotAt(int ring, long n) {
        return ShmFiles.HEADER + ((long) ring * SLOTS + n % SLOTS) * SLOT_BYTES;
    }

    /**
     * Sends {@code message} to the other side: waits while its ring is full (the reader reads every message, and few are
     * in flight), and throws when that lasts past {@code deadlineNanos} ({@link System#nanoTime}) or either side left.
     */
    public void send(byte[] message, long deadlineNanos) {
        synchronized (writeLock) {
            byte[] payload = message;
            int kind = 0;
            if (message.length > SLOT_BYTES - ShmFiles.SLOT_HEAD) {
                payload = writeLarge(message).getBytes(StandardCharsets.US_ASCII);
                kind = 1;
            }
            long consumedAt = RING_AT[out] + 128;
            while (written - (long) LONG.getAcquire(seg, consumedAt) >= SLOTS) {
                if (peerGone() || closed) {
                    throw new IllegalStateException((closed ? "this side of " : "the other side of ") + name() + " left");
                }
                if (System.nanoTime() - deadlineNanos >= 0) {
                    throw new IllegalStateException("the other side of " + name() + " read none of its " + SLOTS + " waiting messages in time");
                }
                LockSupport.parkNanos(50_000L);
            }
            long at = slotAt(out, written);
            MemorySegment.copy(payload, 0, seg, ValueLayout.JAVA_BYTE, at + ShmFiles.SLOT_HEAD, payload.length);
            seg.set(ValueLayout.JAVA_INT, at, kind);
            seg.set(ValueLayout.JAVA_INT, at + 4, payload.length);
            written++;
            LONG.setRelease(seg, RING_AT[out] + 64, written);
            INT.getAndAdd(seg, RING_AT[out], 1);
            Futex.wakeAll(outBell);
        }
    }

    private String writeLarge(byte[] message) {
        String name = "juno-cxm-" + Long.toHexString(ProcessHandle.current().pid()) + "-" + Long.toHexString(NEXT.incrementAndGet());
        Path p = ShmFiles.DIR.resolve(name);
        try (FileChannel ch = FileChannel.open(p, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(message);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            return name;
        } catch (IOException e) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException ignored) {
                // nothing was written
            }
            throw new IllegalStateException("could not write a " + message.length + "-byte message to " + p + ": " + e.getMessage(), e);
        }
    }

    /** The next message from the other side, or null while none is there. */
    public byte[] poll() {
        if (read >= (long) LONG.getAcquire(seg, RING_AT[in] + 64)) {
            return null;
        }
        long at = slotAt(in, read);
        int kind = seg.get(ValueLayout.JAVA_INT, at);
        int len = seg.get(ValueLayout.JAVA_INT, at + 4);
        if (len < 0 || len > SLOT_BYTES - ShmFiles.SLOT_HEAD || (kind != 0 && kind != 1)) {
            throw new IllegalStateException(name() + ": a slot holds a message of kind " + kind + " and " + len + " bytes");
        }
        byte[] payload = new byte[len];
        MemorySegment.copy(seg, ValueLayout.JAVA_BYTE, at + ShmFiles.SLOT_HEAD, payload, 0, len);
        read++;
        LONG.setRelease(seg, RING_AT[in] + 128, read);
        return kind == 0 ? payload : readLarge(new String(payload, StandardCharsets.US_ASCII));
    }

    private byte[] readLarge(String name) {
        if (!LARGE_NAME.matcher(name).matches()) {
            throw new IllegalStateException(name() + ": a slot names " + name + ", not a message file");
        }
        Path p = ShmFiles.DIR.resolve(name);
        try {
            byte[] b = Files.readAllBytes(p);
            Files.deleteIfExists(p);
            return b;
        } catch (IOException e) {
            throw new IllegalStateException(name() + ": could not read message file " + p + ": " + e.getMessage(), e);
        }
    }

    /**
     * The next message from the other side, waiting for it (a short spin, then sleeps on the bell) until
     * {@code deadlineNanos}, {@code stop} says so, or either side left: null in those cases.
     */
    public byte[] receive(long deadlineNanos, BooleanSupplier stop) {
        long start = System.nanoTime();
        while (true) {
            int seen = (int) INT.getAcquire(seg, RING_AT[in]); // before looking: a message after it rings the bell again
            byte[] m = poll();
            if (m != null) {
                return m;
            }
            if (stop.getAsBoolean() || peerGone() || closed) {
                return null;
            }
            long now = System.nanoTime();
            if (now - deadlineNanos >= 0) {
                return null;
            }
            if (now - start >= SPIN_NANOS) {
                Futex.await(inBell, seen, Math.min(MAX_SLEEP_NANOS, deadlineNanos - now), timespec);
            } // else spin: no Thread.onSpinWait(), under KVM a PAUSE loop makes the host deschedule this vCPU
        }
    }

    /** Wakes this side's reader (another thread of this process learned something it waits for, e.g. the stream ended). */
    public void wake() {
        INT.getAndAdd(seg, RING_AT[in], 1);
        Futex.wakeAll(inBell);
    }

    /** Whether the other side marked the channel closed. */
    public boolean peerGone() {
        return (int) INT.getAcquire(seg, GONE_AT[owner ? 1 : 0]) != 0;
    }

    /**
     * Leaves the channel: marks this side gone and wakes the other side's reader (and this side's, so that a thread
     * waiting here looks again); the coordinator removes the file. The mapping goes once unreachable.
     */
    public void close() {
        closed = true;
        INT.setRelease(seg, GONE_AT[owner ? 0 : 1], 1);
        INT.getAndAdd(seg, RING_AT[out], 1);
        Futex.wakeAll(outBell);
        wake();
        if (owner) {
            try {
                if (ShmFiles.inode(path) == inode) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException ignored) {
                // swept once this process is gone
            }
        }
    }
}
