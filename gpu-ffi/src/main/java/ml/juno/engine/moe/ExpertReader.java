package ml.juno.engine.moe;

import com.sun.nio.file.ExtendedOpenOption;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Positional reads of one file by a fixed pool of threads, many in flight at once (the queue depth is what makes
 * streaming pay: one expert read after another leaves the disk idle between them). Opened with {@code O_DIRECT}
 * ({@link ExtendedOpenOption#DIRECT}) where the file system allows it, so the page cache does not quietly hold what
 * the budget leaves out; then every read's position, length and buffer address are multiples of {@link #alignment()}.
 * Where it does not (tmpfs, some overlay file systems), the file is read through the page cache and one log line says so.
 */
final class ExpertReader implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ExpertReader.class.getName());
    private static final Task STOP = new Task(null, null);

    /** One positional read into a slot's memory; reused for every fill of that slot (no allocation per read). */
    static final class Task {
        final Slot slot;
        /** This task's own view of the slot's memory (position and limit are per read). */
        final ByteBuffer buf;
        long position;
        int offset;
        int length;
        /** Bytes that must arrive (the read may be longer: rounded up to the alignment, possibly past the end of file). */
        int need;

        Task(Slot slot, ByteBuffer buf) {
            this.slot = slot;
            this.buf = buf;
        }
    }

    private final Path path;
    private final FileChannel channel;
    private final boolean direct;
    private final int alignment;
    private final ArrayBlockingQueue<Task> queue;
    private final Thread[] threads;
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    final AtomicLong bytesRead = new AtomicLong();
    final AtomicLong reads = new AtomicLong();
    /** Wall time with at least one read queued or running (the achieved bandwidth is bytes over this). */
    final AtomicLong busyNanos = new AtomicLong();
    private final AtomicLong busySince = new AtomicLong();

    /** {@code threads} readers over {@code path}, queue room for {@code capacity} reads; {@code direct}: try O_DIRECT. */
    ExpertReader(Path path, int threads, int capacity, boolean direct) throws IOException {
        this.path = path;
        FileChannel ch = null;
        int align = 4096;
        if (direct) {
            try {
                ch = FileChannel.open(path, StandardOpenOption.READ, ExtendedOpenOption.DIRECT);
                align = (int) Math.max(4096, Files.getFileStore(path).getBlockSize());
                probe(ch, align);
            } catch (IOException | UnsupportedOperationException e) {
                if (ch != null) {
                    ch.close();
                    ch = null;
                }
                LOG.log(System.Logger.Level.INFO, "expert reads of " + path.getFileName()
                        + " go through the page cache: O_DIRECT refused here (" + e.getMessage() + ")");
            }
        }
        this.direct = ch != null;
        this.channel = ch != null ? ch : FileChannel.open(path, StandardOpenOption.READ);
        this.alignment = align;
        this.queue = new ArrayBlockingQueue<>(capacity + threads);
        this.threads = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(this::work, "juno-expert-read-" + i);
            t.setDaemon(true);
            this.threads[i] = t;
            t.start();
        }
    }

    /** One aligned read at 0: some file systems accept the open flag and refuse the reads. */
    private static void probe(FileChannel ch, int align) throws IOException {
        try (var arena = java.lang.foreign.Arena.ofConfined()) {
            ByteBuffer b = arena.allocate(align, align).asByteBuffer();
            ch.read(b, 0);
        }
    }

    boolean direct() {
        return direct;
    }

    int alignment() {
        return alignment;
    }

    Path path() {
        return path;
    }

    /** Queues {@code t}; the slot's {@link Slot#pending} count must already include it. */
    void submit(Task t) {
        int now = inFlight.incrementAndGet();
        if (now == 1) {
            busySince.set(System.nanoTime());
        }
        maxInFlight.accumulateAndGet(now, Math::max);
        if (!queue.offer(t)) {
            if (inFlight.decrementAndGet() == 0) {
                busyNanos.addAndGet(System.nanoTime() - busySince.get());
            }
            t.slot.fail(new IllegalStateException("expert read queue full (" + queue.size() + ")"));
            t.slot.pieceDone();
        }
    }

    private void work() {
        while (true) {
            Task t;
            try {
                t = queue.take();
            } catch (InterruptedException e) {
                return;
            }
            if (t == STOP) {
                return;
            }
            try {
                read(t);
            } catch (Throwable e) {
                t.slot.fail(e);
            } finally {
                if (inFlight.decrementAndGet() == 0) {
                    busyNanos.addAndGet(System.nanoTime() - busySince.get());
                }
                t.slot.pieceDone();
            }
        }
    }

    private void read(Task t) throws IOException {
        ByteBuffer b = t.buf;
        b.limit(t.offset + t.length).position(t.offset);
        long pos = t.position;
        int got = 0;
        while (b.hasRemaining()) {
            int r = channel.read(b, pos);
            if (r <= 0) {
                break;
            }
            got += r;
            pos += r;
            if (direct && r % alignment != 0) {
                break; // end of file: a direct read cannot continue from an unaligned position
            }
        }
        reads.incrementAndGet();
        bytesRead.addAndGet(got);
        if (got < t.need) {
            throw new EOFException("short read of " + path.getFileName() + ": " + got + " of " + t.need
                    + " bytes at offset " + t.position + " (file truncated?)");
        }
    }

    @Override
    public void close() throws IOException {
        for (int i = 0; i < threads.length; i++) {
            queue.offer(STOP);
        }
        for (Thread t : threads) {
            try {
                t.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        channel.close();
    }
}
