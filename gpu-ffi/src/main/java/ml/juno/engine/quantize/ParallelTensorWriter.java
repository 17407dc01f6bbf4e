package ml.juno.engine.quantize;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import ml.juno.engine.tensor.GgmlType;

/**
 * Fills the tensors of a {@link GgufStreamWriter} with a fixed pool of threads. Each tensor is cut into chunks of
 * whole rows (about {@value #CHUNK_ELEMENTS} values); a worker reads a chunk's float rows, quantizes them with its
 * own {@link RowQuantizer} and writes the bytes at their file position, so memory stays at one chunk per thread.
 * Progress is counted in output bytes and reported from the calling thread.
 */
public final class ParallelTensorWriter {
    static final int CHUNK_ELEMENTS = 1 << 16;
    /**
     * Below this many values to quantize with a lane-capable type, the scalar quantizers are used: the lane
     * paths need a few seconds of JIT warm-up before they are faster (about 4M values per thread), so they pay
     * off only on model-sized jobs.
     */
    static final long LANES_MIN_ELEMENTS = 1L << 25;
    private static final int RAW_CHUNK_BYTES = 1 << 20;

    private ParallelTensorWriter() {
    }

    /** Writes every job's tensor; returns when all are on disk, or throws the first failure. */
    public static void run(GgufStreamWriter writer, List<TensorWriteJob> jobs, int threads, String stage,
                           ProgressListener progress) throws IOException {
        if (threads < 1) {
            throw new IllegalArgumentException("threads must be >= 1, was " + threads);
        }
        List<Chunk> chunks = new ArrayList<>();
        long total = 0;
        long laneElements = 0;
        for (TensorWriteJob job : jobs) {
            GgufStreamWriter.TensorSpec spec = job.spec();
            total += spec.byteSize();
            if (job.source() instanceof TensorWriteJob.Source.Raw) {
                long bytes = spec.byteSize();
                for (long off = 0; off < bytes; off += RAW_CHUNK_BYTES) {
                    chunks.add(new Chunk(job, off, Math.min(RAW_CHUNK_BYTES, bytes - off)));
                }
            } else {
                if (RowQuantizers.hasLanes(spec.type())) {
                    laneElements += spec.rowCount() * spec.rowLength();
                }
                long rows = spec.rowCount();
                int rowsPerChunk = (int) Math.max(1, Math.min(rows, CHUNK_ELEMENTS / spec.rowLength()));
                for (long r = 0; r < rows; r += rowsPerChunk) {
                    chunks.add(new Chunk(job, r, Math.min(rowsPerChunk, rows - r)));
                }
            }
        }
        AtomicLong done = new AtomicLong();
        boolean lanes = laneElements >= LANES_MIN_ELEMENTS;
        ThreadLocal<Worker> workers = ThreadLocal.withInitial(() -> new Worker(lanes));
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, "juno-quantize");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<?>> futures = new ArrayList<>(chunks.size());
            for (Chunk c : chunks) {
                futures.add(pool.submit(() -> {
                    workers.get().process(writer, c);
                    done.addAndGet(c.outputBytes());
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                while (true) {
                    try {
                        f.get(100, TimeUnit.MILLISECONDS);
                        break;
                    } catch (TimeoutException e) {
                        progress.progress(stage, done.get(), total);
                    }
                }
            }
            progress.progress(stage, total, total);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof UncheckedIOException u) {
                throw u.getCause();
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IOException(cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while writing tensors", e);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Rows {@code [start, start+count)} of a float job, or bytes {@code [start, start+count)} of a raw one.
     */
    private record Chunk(TensorWriteJob job, long start, long count) {
        long outputBytes() {
            return job.source() instanceof TensorWriteJob.Source.Raw ? count : count * job.spec().rowBytes();
        }
    }

    /** One thread's quantizers and buffers. */
    private static final class Worker {
        private final RowQuantizer[] quantizers = new RowQuantizer[GgmlType.values().length];
        private final boolean lanes;
        private float[] floats = new float[0];
        private byte[] bytes = new byte[0];

        Worker(boolean lanes) {
            this.lanes = lanes;
        }

        void process(GgufStreamWriter writer, Chunk c) {
            TensorWriteJob job = c.job();
            long base = writer.dataPosition(job.index());
            try {
                switch (job.source()) {
                    case TensorWriteJob.Source.Raw(MemorySegment data) -> {
                        ByteBuffer buf = data.asSlice(c.start(), c.count()).asByteBuffer();
                        writer.write(base + c.start(), buf);
                    }
                    case TensorWriteJob.Source.Floats(TensorWriteJob.FloatRows rows) -> {
                        GgufStreamWriter.TensorSpec spec = job.spec();
                        int rowLength = Math.toIntExact(spec.rowLength());
                        int rowBytes = Math.toIntExact(spec.rowBytes());
                        int n = Math.toIntExact(c.count());
                        if (floats.length < n * rowLength) {
                            floats = new float[n * rowLength];
                        }
                        if (bytes.length < n * rowBytes) {
                            bytes = new byte[n * rowBytes];
                        }
                        rows.read(c.start(), n, floats);
                        RowQuantizer q = quantizer(spec.type());
                        for (int r = 0; r < n; r++) {
                            q.quantize(floats, r * rowLength, rowLength, bytes, r * rowBytes);
                        }
                        writer.write(base + c.start() * rowBytes, ByteBuffer.wrap(bytes, 0, n * rowBytes));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        private RowQuantizer quantizer(GgmlType type) {
            RowQuantizer q = quantizers[type.ordinal()];
            if (q == null) {
                q = RowQuantizers.create(type, lanes);
                quantizers[type.ordinal()] = q;
            }
            return q;
        }
    }
}
