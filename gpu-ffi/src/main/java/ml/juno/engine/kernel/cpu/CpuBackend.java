package ml.juno.engine.kernel.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import ml.juno.engine.jfr.MatMulEvent;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kernel.ExpertBatch;
import ml.juno.engine.kernel.GgmlExp;
import ml.juno.engine.kernel.LowRank;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import ml.juno.engine.kv.KvCache;

/**
 * The CPU backend: matrix products in Juno's native kernels ({@link NativeKernels}) where they loaded, else in Vector
 * API kernels, on a fixed {@link ComputePool}; the other operations in Java. Both kinds of product give bit-identical
 * results. {@link ml.juno.engine.kernel.Backends#select} picks the kind as the user asked ({@code --backend},
 * {@code JUNO_BACKEND}). Matrix products decode a tile of weight rows
 * (from their mapped blocks) into a per-thread L1/L2 buffer once per step and multiply it with every activation row of
 * the batch, so each weight byte is read from memory once per step whatever the batch size. Each output element is one
 * dot product in a fixed order, so results do not depend on the batch or on the thread count.
 */
public final class CpuBackend implements Backend {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    /** Weight rows decoded together; a parallel chunk is a whole number of tiles. */
    static final int TILE = 4;
    private static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    private static final int ROWS_PER_CHUNK = 16;
    /** Multiply-adds below which a job is not worth fanning out. */
    private static final long PARALLEL_WORK = 1 << 16;
    /** Rows from which RMSNorm, RoPE and SwiGLU run on the team ({@link RowJob}), and elements for the residual add. */
    private static final int ROW_PARALLEL_ROWS = 16;
    private static final int ROW_PARALLEL_ELEMENTS = 1 << 15;

    static {
        JitDirectives.install();
    }

    private final ComputePool pool;
    /** The native kernels, or {@code null}: the Java ones. */
    private final NativeKernels nat;
    private final NativeMatmulJob nativeMatmul;
    /** Per worker: the heap segments of the arrays it passes to the native kernels. */
    private final HeapSegments[] heap;
    /** The Java kernels' products of the calling thread, each split over the team. */
    private final JavaProducts javaProducts;
    private final AttentionJob attention;
    private final RowJob rowJob = new RowJob();
    private final QuantJob quantJob = new QuantJob();
    private final ExpertJob expertJob;
    private final JavaExpertJob javaExpertJob;
    /**
     * Whether the native kernels take weights rearranged ({@link NativeKernels#packedBytes}: Q4_0, and Q8_0, Q4_K,
     * Q5_K and Q6_K in the AVX-512 variant), made on a matrix's
     * first product and kept, off-heap (in {@link #resident}'s memory), until {@link #close}. The model's matrices live
     * as long as the model, so this holds one copy of each.
     */
    private final boolean repack;
    /** Copies of memory-mapped weights in huge pages, and the memory of the packed copies. */
    private final ResidentWeights resident;
    private final IdentityHashMap<WeightMatrix, MemorySegment> packed = new IdentityHashMap<>();
    /** Packed copies of {@link #forget forgotten} matrices, by size: reused for the next matrix of that size. */
    private final HashMap<Long, ArrayDeque<MemorySegment>> sparePacked = new HashMap<>();

    /** A Java (Vector API) backend with {@code threads} compute threads (the calling thread included). */
    public CpuBackend(int threads) {
        this(threads, null);
    }

    /**
     * A backend whose matrix products run in {@code kernels} ({@code null}: the Java kernels), Q4_0 (and, AVX-512,
     * Q8_0, Q4_K, Q5_K and Q6_K) weights repacked for them unless {@code -Djuno.native.repack=false}.
     */
    public CpuBackend(int threads, NativeKernels kernels) {
        this(threads, kernels, !"false".equals(System.getProperty("juno.native.repack")));
    }

    /**
     * A backend whose matrix products run in {@code kernels}; {@code repack}: whether the native kernels take Q4_0,
     * Q8_0, Q4_K, Q5_K and Q6_K weights repacked ({@link NativeKernels#packedBytes}: faster, within rounding of the Java kernels, Q6_K
     * bit-identical) or as stored (bit-identical to them).
     */
    public CpuBackend(int threads, NativeKernels kernels, boolean repack) {
        this.pool = new ComputePool(threads);
        this.nat = kernels;
        this.heap = new HeapSegments[pool.threads()];
        for (int i = 0; i < heap.length; i++) {
            heap[i] = new HeapSegments();
        }
        this.nativeMatmul = kernels != null ? new NativeMatmulJob() : null;
        this.repack = kernels != null && repack;
        this.resident = kernels != null ? ResidentWeights.forThisMachine() : new ResidentWeights(false);
        this.javaProducts = new JavaProducts(pool.threads());
        this.attention = new AttentionJob(pool.threads(), kernels, heap);
        this.expertJob = kernels != null ? new ExpertJob(pool.threads()) : null;
        this.javaExpertJob = kernels == null ? new JavaExpertJob(pool.threads()) : null;
    }

    /** {@code count} elements (whole blocks) of {@code type} from byte {@code off} of {@code s}, decoded to {@code dst[dstOff..]}. */
    public static void decode(GgmlType type, MemorySegment s, long off, float[] dst, int dstOff, int count) {
        CpuTypeTraits.of(type).kernel().decode(s, off, dst, dstOff, count);
    }

    /** Whether the CPU backend computes with weights of {@code type} ({@link CpuTypeTraits}). */
    public static boolean supports(GgmlType type) {
        return CpuTypeTraits.supports(type);
    }

    @Override
    public String name() {
        return nat != null ? "cpu-native-" + nat.isa() : "cpu-vector-" + F.vectorBitSize();
    }

    /** {@code native} or {@code java}: who computes the matrix products. */
    @Override
    public String kind() {
        return nat != null ? "native" : "java";
    }

    /** The native variant ({@code avx2}, {@code avxvnni}, {@code avx512vnni}), or the Java vectors' width ({@code vector256}). */
    @Override
    public String isa() {
        return nat != null ? nat.isa() : "vector" + F.vectorBitSize();
    }

    @Override
    public int threads() {
        return pool.threads();
    }

    @Override
    public void matmul(WeightMatrix w, float[] x, float[] out, int batch) {
        if (MatMulEvent.enabled() && MatMulEvent.enter(name(), w, batch)) { // JFR juno.MatMul: time the nested call
            try {
                matmul(w, x, out, batch);
            } finally {
                MatMulEvent.exit();
            }
            return;
        }
        if (nat != null && nativeTakes(w)) {
            nativeMatmul(w, out, null, null, null, null, x, batch, true);
            return;
        }
        javaProducts.matmul(w, x, out, batch, true);
    }

    /**
     * The Java kernels' matrix products with their own buffers: the backend's (each product split over the team) or
     * one worker's (a whole product on that worker, for experts run side by side). A product's values do not depend
     * on how its chunks are spread: each output element is one dot product in a fixed order.
     */
    private final class JavaProducts {
        private final MatmulJob matmul;
        private final QuantMatmulJob quantMatmul;
        private final QuantActivations quantX = new QuantActivations();
        private float[] rounded = new float[0];

        JavaProducts(int threads) {
            this.matmul = new MatmulJob(threads);
            this.quantMatmul = new QuantMatmulJob(threads);
        }

        /** {@code out = w·x} for {@code batch} rows; {@code parallel}: over the team, else all on the calling thread as worker 0. */
        void matmul(WeightMatrix w, float[] x, float[] out, int batch, boolean parallel) {
            CpuTypeTraits traits = CpuTypeTraits.of(w.type());
            int chunks = (w.rows() + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK;
            long work = parallel ? (long) w.rows() * w.cols() * batch : 0;
            if (traits.quantized()) {
                QuantKernel kernel = traits.quantKernel();
                quantX.quantize(x, batch, w.cols(), traits.activation());
                boolean fused = batch < traits.fusedBelow();
                if (!fused) {
                    kernel.toFloatLanes(quantX, batch);
                }
                quantMatmul.set(w, kernel, fused, quantX, out, batch);
                run(chunks, quantMatmul, work);
                quantMatmul.clear();
                return;
            }
            int n = batch * w.cols();
            if (rounded.length < n) {
                rounded = new float[n];
            }
            ActivationRounding.round(traits.activation(), x, rounded, 0, n);
            matmul.set(w, (FloatKernel) traits.kernel(), rounded, out, batch);
            run(chunks, matmul, work);
            matmul.clear();
        }
    }

    private boolean nativeTakes(WeightMatrix w) {
        return NativeKernels.supports(w.type(), w.cols());
    }

    /**
     * Two or three products of one input in one parallel step: the input quantized once per weight type, then each
     * worker makes one downcall per matrix for its share of the rows. The same results as separate calls.
     */
    @Override
    public void matmul(WeightMatrix w0, float[] out0, WeightMatrix w1, float[] out1, WeightMatrix w2, float[] out2,
                       float[] x, int batch) {
        if (nat == null || MatMulEvent.enabled() || !nativeTakes(w0) || !nativeTakes(w1)
                || (w2 != null && !nativeTakes(w2)) || w1.cols() != w0.cols() || (w2 != null && w2.cols() != w0.cols())) {
            Backend.super.matmul(w0, out0, w1, out1, w2, out2, x, batch);
            return;
        }
        nativeMatmul(w0, out0, w1, out1, w2, out2, x, batch, true);
    }

    private final Arena[] nativeArenas = new Arena[3];
    private final MemorySegment[] nativeX = {MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL};

    /** Native activation buffer {@code i} (0..2) of at least {@code need} bytes. */
    private MemorySegment activationBuffer(int i, long need) {
        if (nativeX[i].byteSize() < need) {
            if (nativeArenas[i] != null) {
                nativeArenas[i].close();
            }
            nativeArenas[i] = Arena.ofShared();
            nativeX[i] = nativeArenas[i].allocate(Math.max(need, 2 * nativeX[i].byteSize()), 64);
        }
        return nativeX[i];
    }

    /**
     * One to three products of the same input ({@code w1}/{@code w2} may be {@code null}) in the native kernels: the
     * input quantized once per weight type on the calling thread, then one parallel step in which each worker makes
     * one downcall per matrix for its share of the rows. {@code pack}: from the weights' packed copies where their type
     * has one ({@link #packedFor}), else from the weights as stored.
     */
    private void nativeMatmul(WeightMatrix w0, float[] out0, WeightMatrix w1, float[] out1, WeightMatrix w2, float[] out2,
                              float[] x, int batch, boolean pack) {
        NativeMatmulJob job = nativeMatmul;
        job.w[0] = w0;
        job.w[1] = w1;
        job.w[2] = w2;
        job.out[0] = out0;
        job.out[1] = out1;
        job.out[2] = out2;
        int n = w2 != null ? 3 : w1 != null ? 2 : 1;
        if ((long) batch * w0.cols() > x.length) {
            throw new IllegalArgumentException(w0.name() + ": input too small for a batch of " + batch);
        }
        MemorySegment xs = heap[0].of(x);
        long work = 0;
        int minRows = Integer.MAX_VALUE;
        for (int i = 0; i < n; i++) {
            WeightMatrix w = job.w[i];
            if ((long) batch * w.rows() > job.out[i].length) {
                throw new IllegalArgumentException(w.name() + ": output too small for a batch of " + batch);
            }
            job.packed[i] = pack ? packedFor(w) : null;
            if (pack && job.packed[i] == null) {
                w = resident.of(w);
                job.w[i] = w;
            }
            boolean packed = job.packed[i] != null;
            job.xq[i] = null;
            for (int j = 0; j < i; j++) {
                if (job.w[j].type() == w.type() && (job.packed[j] != null) == packed) {
                    job.xq[i] = job.xq[j];
                    break;
                }
            }
            if (job.xq[i] == null) {
                job.xq[i] = activationBuffer(i, nat.activationBytes(w.type(), packed, batch, w.cols()));
                if (rowsInParallel(batch)) {
                    quantJob.add(w.type(), packed, job.xq[i]);
                } else {
                    nat.quantize(w.type(), packed, xs, batch, w.cols(), job.xq[i]);
                }
            }
            work += (long) w.rows() * w.cols() * batch;
            minRows = Math.min(minRows, w.rows());
        }
        quantJob.run(xs, batch, w0.cols());
        job.count = n;
        job.batch = batch;
        job.parts = work < PARALLEL_WORK ? 1 : Math.min(pool.threads(), (minRows + 15) / 16);
        pool.parallelFor(job.parts, job);
        job.clear();
    }

    /** One to three native products in one parallel step: part p takes rows {@code [rows·p/parts, rows·(p+1)/parts)} of each, in 16s. */
    private final class NativeMatmulJob implements ComputePool.Body {
        final WeightMatrix[] w = new WeightMatrix[3];
        final float[][] out = new float[3][];
        final MemorySegment[] xq = new MemorySegment[3];
        /** {@link #packedFor} each matrix, or {@code null}. */
        final MemorySegment[] packed = new MemorySegment[3];
        int count;
        int batch;
        int parts;

        void clear() {
            java.util.Arrays.fill(w, null);
            java.util.Arrays.fill(out, null);
            java.util.Arrays.fill(packed, null);
        }

        @Override
        public void run(int chunk, int worker) {
            for (int i = 0; i < count; i++) {
                int rows = w[i].rows();
                nat.matmul(w[i], packed[i], xq[i], batch, heap[worker].of(out[i]), split(rows, chunk, parts),
                        split(rows, chunk + 1, parts));
            }
        }

        private static int split(int rows, int p, int parts) {
            if (p >= parts) {
                return rows;
            }
            return (int) Math.min(rows, ((long) rows * p / parts + 8) / 16 * 16);
        }
    }

    /** The packed form of {@code w} for the native kernels, made on first use; {@code null} where it has none. */
    private MemorySegment packedFor(WeightMatrix w) {
        if (!packs(w)) {
            return null;
        }
        MemorySegment p = packed.get(w);
        if (p == null) {
            ArrayDeque<MemorySegment> spare = sparePacked.get(nat.packedBytes(w));
            p = spare == null ? null : spare.pollFirst();
            if (p == null) {
                p = resident.packedMemory(nat.packedBytes(w));
            }
            nat.repackInto(w, p);
            packed.put(w, p);
        }
        return p;
    }

    /** Whether the native products take {@code w} from a packed copy ({@link #packedFor}). */
    private boolean packs(WeightMatrix w) {
        return repack && nat.packedBytes(w) >= 0;
    }

    @Override
    public void rest() {
        pool.rest();
    }

    /** Copies the mapped matrices that its native products will read into huge pages now ({@link ResidentWeights}). */
    @Override
    public void prepare(java.util.List<WeightMatrix> matrices) {
        if (nat == null) {
            return;
        }
        long start = System.nanoTime();
        long before = resident.copiedBytes();
        for (WeightMatrix w : matrices) {
            if (NativeKernels.supports(w.type(), w.cols()) && !packs(w)) {
                resident.of(w);
            }
        }
        resident.loaded(resident.copiedBytes() - before, System.nanoTime() - start);
    }

    @Override
    public void forget(WeightMatrix w) {
        resident.forget(w);
        MemorySegment p = packed.remove(w);
        if (p != null) {
            sparePacked.computeIfAbsent(p.byteSize(), k -> new ArrayDeque<>()).addFirst(p);
        }
    }

    /** Bytes of memory-mapped weights this backend copied into huge pages ({@link ResidentWeights}). */
    public long residentBytes() {
        return resident.copiedBytes();
    }

    /** Packed copies held (in use and spare): bounded by the matrices alive at once, however often slots refill. */
    public int packedCopies() {
        int n = packed.size();
        for (ArrayDeque<MemorySegment> d : sparePacked.values()) {
            n += d.size();
        }
        return n;
    }

    /** Small jobs run on the calling thread: waking the team costs more than it saves. */
    private void run(int chunks, ComputePool.Body body, long work) {
        if (work < PARALLEL_WORK) {
            for (int c = 0; c < chunks; c++) {
                body.run(c, 0);
            }
        } else {
            pool.parallelFor(chunks, body);
        }
    }

    /**
     * Mixture-of-experts products from the weights as stored, never from packed copies: a packed copy of every expert
     * would double an MoE model's memory (and every streamed refill would repack), while an expert's few rows per step
     * gain little from packing. With the native kernels, the experts whose rows are at most a fair share of the batch's
     * run together, one whole expert per worker at a time (largest first), so a decode step's eight experts cost one
     * parallel step instead of sixteen; an expert with more rows than that runs alone, each product split over the
     * team. Both ways give each expert the same values (one dot product per output element, in a fixed order), which
     * are those of the Java kernels.
     */
    @Override
    public void experts(ExpertBatch b) {
        int c = b.count();
        if (c == 0) {
            return;
        }
        long total = 0;
        for (int k = 0; k < c; k++) {
            total += b.rows(k);
        }
        int threads = pool.threads();
        boolean events = MatMulEvent.enabled();
        // the present experts that run alone first, on the calling thread, each product over the team; then those run
        // together (the incoming ones handed out last: sortLargestFirst); then the incoming ones that run alone, each
        // once its bytes are here
        ExpertRun job = nat == null ? javaExpertJob : expertJob;
        int together = 0;
        for (int k = 0; k < c; k++) {
            if (!alone(b, k, threads, total, events)) {
                job.order(together++, k);
            } else if (!b.incoming(k)) {
                runAlone(b, k);
            }
        }
        if (together > 0) {
            job.run(b, together);
        }
        for (int k = 0; k < c; k++) {
            if (b.incoming(k) && alone(b, k, threads, total, events) && b.arrive(k)) {
                runAlone(b, k);
            }
        }
    }

    /** Whether expert {@code k} runs alone, each product over the team, rather than whole on one worker. */
    private boolean alone(ExpertBatch b, int k, int threads, long total, boolean events) {
        int rows = b.rows(k);
        if (events || threads == 1 || (long) rows * threads > total) {
            return true;
        }
        return nat != null && (!nativeTakes(b.gate(k)) || !nativeTakes(b.up(k)) || !nativeTakes(b.down(k)));
    }

    private void runAlone(ExpertBatch b, int k) {
        if (nat == null) {
            expert(b, k); // the Java kernels: Backend's way, each product over the team
        } else {
            expertAlone(b, k);
        }
    }

    /**
     * Whole experts, one per worker at a time, in the Java kernels: each worker gathers its expert's rows, runs gate,
     * up, the activation and down with its own products and buffers, and writes the weighted outputs to the expert's
     * own rows of {@link ExpertBatch#mixed}; the values are those of the experts run one by one.
     */
    private final class JavaExpertJob extends ExpertRun {
        private final JavaProducts[] products;
        private final float[][] in;
        private final float[][] out;
        private final float[][] gate;
        private final float[][] up;

        JavaExpertJob(int threads) {
            products = new JavaProducts[threads];
            in = new float[threads][0];
            out = new float[threads][0];
            gate = new float[threads][0];
            up = new float[threads][0];
            for (int i = 0; i < threads; i++) {
                products[i] = new JavaProducts(1);
            }
        }

        @Override
        void compute(int k, int worker) {
            ExpertBatch eb = b;
            int rows = eb.rows(k);
            WeightMatrix g = eb.gate(k);
            int width = g.rows();
            if (in[worker].length < rows * eb.dim) {
                int cap = Math.max(rows, 2 * (in[worker].length / eb.dim));
                in[worker] = new float[cap * eb.dim];
                out[worker] = new float[cap * eb.dim];
            }
            if (gate[worker].length < rows * width) {
                int cap = Math.max(rows, 2 * (gate[worker].length / width));
                gate[worker] = new float[cap * width];
                up[worker] = new float[cap * width];
            }
            float[] xi = in[worker];
            float[] go = gate[worker];
            float[] uo = up[worker];
            float[] o = out[worker];
            JavaProducts p = products[worker];
            eb.gather(k, xi);
            p.matmul(g, xi, go, rows, false);
            p.matmul(eb.up(k), xi, uo, rows, false);
            if (eb.gelu()) {
                geglu(go, uo, rows, width);
            } else {
                swigluRows(go, uo, 0, rows, width); // on a worker: never the team's job
            }
            p.matmul(eb.down(k), go, o, rows, false);
            eb.scatter(k, o);
        }
    }

    /**
     * A step's experts over the team, whole experts per worker, largest first ({@link #order}, then {@link #run}); the
     * subclass computes expert {@code order[chunk]} of {@link #b} in {@link #run(int, int)}.
     */
    private abstract class ExpertRun implements ComputePool.Body {
        int[] order = new int[16];
        ExpertBatch b;

        /** Puts expert {@code k} at place {@code i} of the next run. */
        final void order(int i, int k) {
            if (i == order.length) {
                order = java.util.Arrays.copyOf(order, 2 * i);
            }
            order[i] = k;
        }

        final void run(ExpertBatch batch, int n) {
            sortLargestFirst(order, n, batch);
            this.b = batch;
            try {
                pool.parallelFor(n, this);
            } finally {
                this.b = null;
            }
        }

        @Override
        public final void run(int chunk, int worker) {
            int k = order[chunk];
            if (b.arrive(k)) { // an incoming expert: its bytes are here (else skipped: the step fails)
                compute(k, worker);
            }
        }

        /** Computes expert {@code k} of {@link #b} on worker {@code worker}. */
        abstract void compute(int k, int worker);
    }

    /**
     * Sorts {@code order[0..n)} by rows, largest first (ties in batch order), so the last experts handed out are short;
     * the incoming experts after the present ones, so a worker waits for bytes only when nothing present is left.
     */
    private static void sortLargestFirst(int[] order, int n, ExpertBatch batch) {
        for (int i = 1; i < n; i++) {
            int k = order[i];
            int j = i - 1;
            while (j >= 0 && later(batch, order[j], k)) {
                order[j + 1] = order[j];
                j--;
            }
            order[j + 1] = k;
        }
    }

    /** Whether expert {@code a} is handed out after {@code b}: incoming after present, then fewer rows after more. */
    private static boolean later(ExpertBatch batch, int a, int b) {
        if (batch.incoming(a) != batch.incoming(b)) {
            return batch.incoming(a);
        }
        return batch.rows(a) < batch.rows(b);
    }

    /** Expert {@code k} of {@code b} on the calling thread, each product over the team. */
    private void expertAlone(ExpertBatch b, int k) {
        int rows = b.rows(k);
        WeightMatrix gate = b.gate(k);
        WeightMatrix up = b.up(k);
        b.gather(k, b.in);
        if (!MatMulEvent.enabled() && nativeTakes(gate) && nativeTakes(up) && gate.cols() == up.cols()) {
            nativeMatmul(gate, b.gate, up, b.up, null, null, b.in, rows, false);
        } else {
            unpackedMatmul(gate, b.in, b.gate, rows);
            unpackedMatmul(up, b.in, b.up, rows);
        }
        if (b.gelu()) {
            geglu(b.gate, b.up, rows, gate.rows());
        } else {
            swiglu(b.gate, b.up, rows, gate.rows());
        }
        unpackedMatmul(b.down(k), b.gate, b.out, rows);
        b.scatter(k, b.out);
    }

    /** One or two native products of one input from the weights as stored ({@code w1} may be {@code null}): for reports. */
    void unpackedPair(WeightMatrix w0, float[] out0, WeightMatrix w1, float[] out1, float[] x, int batch) {
        nativeMatmul(w0, out0, w1, out1, null, null, x, batch, false);
    }

    /** {@link #matmul} from the weights as stored (no packed copy). */
    private void unpackedMatmul(WeightMatrix w, float[] x, float[] out, int batch) {
        if (nat == null || !nativeTakes(w)) {
            matmul(w, x, out, batch); // Java kernels: nothing packed
            return;
        }
        if (MatMulEvent.enabled() && MatMulEvent.enter(name(), w, batch)) {
            try {
                nativeMatmul(w, out, null, null, null, null, x, batch, false);
            } finally {
                MatMulEvent.exit();
            }
            return;
        }
        nativeMatmul(w, out, null, null, null, null, x, batch, false);
    }

    /**
     * Whole experts, one per worker at a time, in the native kernels from the weights as stored: each worker gathers
     * its expert's rows, quantizes them, runs gate and up, the activation, quantizes that and runs down in its own
     * buffers, then writes the weighted outputs to the expert's own rows of {@link ExpertBatch#mixed}.
     */
    private final class ExpertJob extends ExpertRun {
        private final Scratch[] scratch;

        ExpertJob(int threads) {
            scratch = new Scratch[threads];
            for (int i = 0; i < threads; i++) {
                scratch[i] = new Scratch();
            }
        }

        @Override
        void compute(int k, int worker) {
            ExpertBatch eb = b;
            int rows = eb.rows(k);
            WeightMatrix gate = eb.gate(k);
            WeightMatrix up = eb.up(k);
            WeightMatrix down = eb.down(k);
            int width = gate.rows();
            Scratch s = scratch[worker];
            s.fit(rows, eb.dim, width);
            eb.gather(k, s.in);
            MemorySegment xq = s.xq(0, nat.activationBytes(gate.type(), false, rows, eb.dim));
            nat.quantize(gate.type(), false, s.inSeg, rows, eb.dim, xq);
            nat.matmul(gate, null, xq, rows, s.gateSeg, 0, width);
            if (up.type() != gate.type()) {
                xq = s.xq(1, nat.activationBytes(up.type(), false, rows, eb.dim));
                nat.quantize(up.type(), false, s.inSeg, rows, eb.dim, xq);
            }
            nat.matmul(up, null, xq, rows, s.upSeg, 0, width);
            if (eb.gelu()) {
                geglu(s.gate, s.up, rows, width);
            } else {
                swigluRows(s.gate, s.up, 0, rows, width); // on a worker: never the team's job
            }
            xq = s.xq(2, nat.activationBytes(down.type(), false, rows, width));
            nat.quantize(down.type(), false, s.gateSeg, rows, width, xq);
            nat.matmul(down, null, xq, rows, s.outSeg, 0, eb.dim);
            eb.scatter(k, s.out);
        }

        void close() {
            for (Scratch s : scratch) {
                s.close();
            }
        }
    }

    /**
     * One worker's buffers for whole experts: input rows and output {@code [rows][dim]}, gate and up
     * {@code [rows][width]} (heap arrays, with their segments for the downcalls), and three quantized-activation buffers
     * (off-heap). Grown when a step needs more, else reused: no allocation per token.
     */
    private static final class Scratch {
        float[] in = new float[0];
        float[] out = new float[0];
        float[] gate = new float[0];
        float[] up = new float[0];
        MemorySegment inSeg;
        MemorySegment outSeg;
        MemorySegment gateSeg;
        MemorySegment upSeg;
        private final Arena[] arenas = new Arena[3];
        private final MemorySegment[] xq = {MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL};

        void fit(int rows, int dim, int width) {
            if (in.length < rows * dim) {
                int cap = Math.max(rows, 2 * (in.length / dim));
                in = new float[cap * dim];
                out = new float[cap * dim];
                inSeg = MemorySegment.ofArray(in);
                outSeg = MemorySegment.ofArray(out);
            }
            if (gate.length < rows * width) {
                int cap = Math.max(rows, 2 * (gate.length / width));
                gate = new float[cap * width];
                up = new float[cap * width];
                gateSeg = MemorySegment.ofArray(gate);
                upSeg = MemorySegment.ofArray(up);
            }
        }

        MemorySegment xq(int i, long need) {
            if (xq[i].byteSize() < need) {
                if (arenas[i] != null) {
                    arenas[i].close();
                }
                arenas[i] = Arena.ofShared();
                xq[i] = arenas[i].allocate(Math.max(need, 2 * xq[i].byteSize()), 64);
            }
            return xq[i];
        }

        void close() {
            for (int i = 0; i < arenas.length; i++) {
                if (arenas[i] != null) {
                    arenas[i].close();
                    arenas[i] = null;
                    xq[i] = MemorySegment.NULL;
                }
            }
        }
    }

    @Override
    public void embed(WeightMatrix table, int token, float[] out, int outOffset) {
        CpuTypeTraits.of(table.type()).kernel().decode(table.data(), token * table.rowStride(), out, outOffset, table.cols());
    }

    @Override
    public void rmsNorm(float[] x, float[] weight, float eps, float[] out, int batch, int dim) {
        if (rowsInParallel(batch)) {
            rowJob.run(RowJob.RMS_NORM, batch, x, weight, out, eps, dim, null);
        } else {
            rmsNormRows(x, weight, eps, out, 0, batch, dim);
        }
    }

    private static void rmsNormRows(float[] x, float[] weight, float eps, float[] out, int from, int to, int dim) {
        for (int b = from; b < to; b++) {
            int o = b * dim;
            double sum = 0;
            for (int i = 0; i < dim; i++) {
                sum += x[o + i] * x[o + i];
            }
            float mean = (float) (sum / dim);
            float scale = 1f / (float) Math.sqrt(mean + eps);
            int i = 0;
            for (int bound = F.loopBound(dim); i < bound; i += F.length()) {
                FloatVector.fromArray(F, x, o + i).mul(scale).mul(FloatVector.fromArray(F, weight, i)).intoArray(out, o + i);
            }
            for (; i < dim; i++) {
                out[o + i] = (x[o + i] * scale) * weight[i];
            }
        }
    }

    @Override
    public void rope(float[] x, RopeShape shape, int batch, float[] cos, float[] sin) {
        if (rowsInParallel(batch)) {
            rowJob.run(RowJob.ROPE, batch, x, cos, sin, 0f, 0, shape);
        } else {
            ropeScalar(x, shape, batch, cos, sin);
        }
    }

    /** {@link #rope} in scalar code: a small share of a step, and the pairs' strides differ between the layouts. */
    static void ropeScalar(float[] x, RopeShape shape, int batch, float[] cos, float[] sin) {
        ropeRows(x, shape, 0, batch, cos, sin);
    }

    private static void ropeRows(float[] x, RopeShape shape, int from, int to, float[] cos, float[] sin) {
        int half = shape.ropeDims() / 2;
        int width = shape.heads() * shape.headDim();
        for (int b = from; b < to; b++) {
            for (int h = 0; h < shape.heads(); h++) {
                int base = b * width + h * shape.headDim();
                for (int i = 0; i < half; i++) {
                    int i0 = shape.neox() ? base + i : base + 2 * i;
                    int i1 = shape.neox() ? base + i + half : base + 2 * i + 1;
                    float c = cos[b * half + i];
                    float s = sin[b * half + i];
                    float x0 = x[i0];
                    float x1 = x[i1];
                    x[i0] = x0 * c - x1 * s;
                    x[i1] = x0 * s + x1 * c;
                }
            }
        }
    }

    @Override
    public void attention(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out) {
        attention(cache, layer, shape, rows, q, out, 0);
    }

    @Override
    public void attention(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out, int window) {
        attention.set(cache, layer, shape, rows, q, out, window);
        long work = 0;
        for (int b = 0; b < rows.size(); b++) {
            work += (rows.position(b) + 1L) * shape.qDim();
        }
        run(attention.chunks(), attention, 2 * work);
        attention.clear();
    }

    @Override
    public void swiglu(float[] gate, float[] up, int rows, int cols) {
        if (rowsInParallel(rows)) {
            rowJob.run(RowJob.SWIGLU, rows, gate, up, null, 0f, cols, null);
        } else {
            swigluRows(gate, up, 0, rows, cols);
        }
    }

    private static void swigluRows(float[] gate, float[] up, int from, int to, int cols) {
        // per row, as ggml's AVX-512 build: its vector expf over full chunks of 16 (two 8-lane halves here), the C
        // library's for the tail after the last full chunk (the tests' ScalarKernels.swiglu is the reference)
        for (int r = from; r < to; r++) {
            int base = r * cols;
            int i = 0;
            for (; i + GgmlExp.CHUNK <= cols; i += GgmlExp.CHUNK) {
                int lo = base + i;
                int hi = lo + 8;
                GgmlExp.silu(FloatVector.fromArray(F8, gate, lo)).mul(FloatVector.fromArray(F8, up, lo)).intoArray(gate, lo);
                GgmlExp.silu(FloatVector.fromArray(F8, gate, hi)).mul(FloatVector.fromArray(F8, up, hi)).intoArray(gate, hi);
            }
            for (; i < cols; i++) {
                gate[base + i] = GgmlExp.siluTail(gate[base + i]) * up[base + i];
            }
        }
    }

    /**
     * The LoRA delta with the down-projection {@code A·x} in eight vector lanes (one FMA chain per lane, reduced once
     * in a fixed order: the same for every row, and the same compiled as interpreted), the up-projection {@code B·t}
     * (rank-long rows) in scalar order. The native backend inherits it.
     */
    @Override
    public void addLowRank(LowRank w, float[] x, float[] out, int batch, float[] rowScale, float[] tmp) {
        Backend.checkLowRank(w, x, out, batch, rowScale, tmp);
        int in = w.in();
        int r = w.rank();
        int o = w.out();
        float[] a = w.a();
        float[] bm = w.b();
        int bound = F8.loopBound(in);
        for (int row = 0; row < batch; row++) {
            float scale = rowScale[row];
            if (scale == 0f) {
                continue;
            }
            int xo = row * in;
            int to = row * r;
            for (int j = 0; j < r; j++) {
                int ao = j * in;
                FloatVector acc = FloatVector.zero(F8);
                int k = 0;
                for (; k < bound; k += F8.length()) {
                    acc = FloatVector.fromArray(F8, a, ao + k).fma(FloatVector.fromArray(F8, x, xo + k), acc);
                }
                // the lanes in a fixed order: reduceLanes may sum them in another order once compiled than before
                float sum = QuantLanes.sum(acc);
                for (; k < in; k++) {
                    sum += a[ao + k] * x[xo + k];
                }
                tmp[to + j] = sum * scale;
            }
            int oo = row * o;
            for (int i = 0; i < o; i++) {
                float sum = 0f;
                int bo = i * r;
                for (int j = 0; j < r; j++) {
                    sum += bm[bo + j] * tmp[to + j];
                }
                out[oo + i] += sum;
            }
        }
    }

    @Override
    public void add(float[] acc, float[] x, int n) {
        if (n >= ROW_PARALLEL_ELEMENTS && pool.threads() > 1) {
            rowJob.run(RowJob.ADD, n, acc, x, null, 0f, 0, null);
        } else {
            addRange(acc, x, 0, n);
        }
    }

    private static void addRange(float[] acc, float[] x, int from, int to) {
        int i = from;
        for (int bound = from + F.loopBound(to - from); i < bound; i += F.length()) {
            FloatVector.fromArray(F, acc, i).add(FloatVector.fromArray(F, x, i)).intoArray(acc, i);
        }
        for (; i < to; i++) {
            acc[i] += x[i];
        }
    }

    /** Whether a row-wise step of {@code rows} rows runs on the team: a prompt's rows, with a team to share them. */
    private boolean rowsInParallel(int rows) {
        return rows >= ROW_PARALLEL_ROWS && pool.threads() > 1;
    }

    /**
     * A prompt's activations quantized on the team before its products: each thread quantizes a contiguous range of rows
     * for every weight type the products need ({@link NativeKernels#quantizeRows}), which gives the bytes one call for
     * the whole batch gives.
     */
    private final class QuantJob implements ComputePool.Body {
        private final GgmlType[] types = new GgmlType[3];
        private final boolean[] packed = new boolean[3];
        private final MemorySegment[] buffers = new MemorySegment[3];
        private int count;
        private MemorySegment x;
        private int rows;
        private int cols;

        void add(GgmlType type, boolean packedType, MemorySegment buffer) {
            types[count] = type;
            packed[count] = packedType;
            buffers[count] = buffer;
            count++;
        }

        /** Quantizes what was added, if anything, on the team. */
        void run(MemorySegment x, int rows, int cols) {
            if (count == 0) {
                return;
            }
            this.x = x;
            this.rows = rows;
            this.cols = cols;
            try {
                pool.parallelFor(pool.threads(), this);
            } finally {
                java.util.Arrays.fill(types, null);
                java.util.Arrays.fill(buffers, null);
                this.x = null;
                count = 0;
            }
        }

        @Override
        public void run(int chunk, int worker) {
            int from = share(rows, chunk);
            int to = share(rows, chunk + 1);
            for (int i = 0; i < count; i++) {
                nat.quantizeRows(types[i], packed[i], x, rows, cols, buffers[i], from, to);
            }
        }
    }

    /**
     * Row-wise steps of many rows (RMSNorm, RoPE, SwiGLU, the residual add) split over the team in contiguous ranges;
     * every row (every element, for the add) is computed as on one thread, so the results are the same. A prompt's
     * step otherwise left ~5% of its time to the calling thread alone, while the others waited.
     */
    private final class RowJob implements ComputePool.Body {
        static final int RMS_NORM = 0;
        static final int ROPE = 1;
        static final int SWIGLU = 2;
        static final int ADD = 3;
        private int op;
        private int count;
        private float[] a;
        private float[] b;
        private float[] c;
        private float eps;
        private int width;
        private RopeShape rope;

        void run(int op, int count, float[] a, float[] b, float[] c, float eps, int width, RopeShape rope) {
            this.op = op;
            this.count = count;
            this.a = a;
            this.b = b;
            this.c = c;
            this.eps = eps;
            this.width = width;
            this.rope = rope;
            try {
                pool.parallelFor(pool.threads(), this);
            } finally {
                this.a = null;
                this.b = null;
                this.c = null;
                this.rope = null;
            }
        }

        @Override
        public void run(int chunk, int worker) {
            // the add splits elements at multiples of 16 (no two threads on one cache line), the rest whole rows
            int unit = op == ADD ? 16 : 1;
            int units = (count + unit - 1) / unit;
            int from = Math.min(count, share(units, chunk) * unit);
            int to = Math.min(count, share(units, chunk + 1) * unit);
            switch (op) {
                case RMS_NORM -> rmsNormRows(a, b, eps, c, from, to, width);
                case ROPE -> ropeRows(a, rope, from, to, b, c);
                case SWIGLU -> swigluRows(a, b, from, to, width);
                default -> addRange(a, b, from, to);
            }
        }
    }

    /** Where part {@code part} of {@code count} items begins when the team splits them in contiguous ranges. */
    private int share(int count, int part) {
        return (int) ((long) count * part / pool.threads());
    }

    @Override
    public void close() {
        pool.close();
        if (expertJob != null) {
            expertJob.close();
        }
        packed.clear();
        sparePacked.clear();
        resident.close();
        for (int i = 0; i < nativeArenas.length; i++) {
            if (nativeArenas[i] != null) {
                nativeArenas[i].close();
                nativeArenas[i] = null;
                nativeX[i] = MemorySegment.NULL;
            }
        }
    }

    /** The matrix product as a reusable parallel job: chunk = {@value #ROWS_PER_CHUNK} weight rows. */
    private static final class MatmulJob implements ComputePool.Body {
        private final float[][] tiles;
        private WeightMatrix w;
        private FloatKernel kernel;
        private float[] x;
        private float[] out;
        private int batch;

        MatmulJob(int threads) {
            tiles = new float[threads][];
        }

        void set(WeightMatrix w, FloatKernel kernel, float[] x, float[] out, int batch) {
            this.w = w;
            this.kernel = kernel;
            this.x = x;
            this.out = out;
            this.batch = batch;
        }

        void clear() {
            w = null;
            kernel = null;
            x = null;
            out = null;
        }

        @Override
        public void run(int chunk, int worker) {
            int cols = w.cols();
            int rows = w.rows();
            float[] tile = tiles[worker];
            if (tile == null || tile.length < TILE * cols) {
                tile = new float[TILE * cols];
                tiles[worker] = tile;
            }
            int end = Math.min(rows, (chunk + 1) * ROWS_PER_CHUNK);
            boolean f16Tail = kernel.f16Order && cols % 16 != 0;
            for (int r0 = chunk * ROWS_PER_CHUNK; r0 < end; r0 += TILE) {
                int tileRows = Math.min(TILE, end - r0);
                if (batch < TILE || tileRows < TILE || cols % 16 != 0) {
                    for (int r = r0; r < r0 + tileRows; r++) {
                        kernel.decode(w.data(), r * w.rowStride(), tile, 0, cols);
                        for (int b = 0; b < batch; b++) {
                            out[b * rows + r] = f16Tail ? FloatKernel.dotF16Row(tile, 0, x, b * cols, cols)
                                    : FloatKernel.dot(tile, 0, x, b * cols, cols);
                        }
                    }
                } else {
                    for (int t = 0; t < TILE; t++) {
                        kernel.decode(w.data(), (r0 + t) * w.rowStride(), tile, t * cols, cols);
                    }
                    for (int b = 0; b < batch; b++) {
                        FloatKernel.dot4(tile, cols, x, b * cols, out, b * rows + r0);
                    }
                }
            }
        }

    }

    /**
     * Quantized matrix product as a reusable parallel job: few activation rows run the type's single-row kernel
     * ({@link QuantKernel#dotRows}); otherwise each tile of weight rows is decoded once into integer quants and scales
     * ({@link QuantRow}), then dotted with every quantized activation row of the batch.
     */
    private static final class QuantMatmulJob implements ComputePool.Body {
        private final QuantRow[][] tilesByWorker;
        /** Per worker: scratch for a tile's min terms with every activation row ({@link QuantKernel#dotTilePairs}). */
        private final float[][] corrByWorker;
        private WeightMatrix w;
        private QuantKernel kernel;
        private boolean fused;
        private QuantActivations x;
        private float[] out;
        private int batch;

        QuantMatmulJob(int threads) {
            tilesByWorker = new QuantRow[threads][];
            corrByWorker = new float[threads][];
        }

        void set(WeightMatrix w, QuantKernel kernel, boolean fused, QuantActivations x, float[] out, int batch) {
            this.w = w;
            this.kernel = kernel;
            this.fused = fused;
            this.x = x;
            this.out = out;
            this.batch = batch;
        }

        void clear() {
            w = null;
            kernel = null;
            x = null;
            out = null;
        }

        @Override
        public void run(int chunk, int worker) {
            int cols = w.cols();
            int rows = w.rows();
            QuantRow[] tile = tilesByWorker[worker];
            if (tile == null || tile[0].q.length < cols) {
                tile = new QuantRow[TILE];
                for (int t = 0; t < TILE; t++) {
                    tile[t] = new QuantRow(cols);
                }
                tilesByWorker[worker] = tile;
            }
            int end = Math.min(rows, (chunk + 1) * ROWS_PER_CHUNK);
            if (fused) {
                // few activation rows: quants built in registers straight from the mapped blocks, no decode buffer
                // (bit-identical to the path below); the chunk's weight rows stay in cache between activation rows
                for (int b = 0; b < batch; b++) {
                    kernel.dotRows(w.data(), w.rowStride(), cols, x, b, out, b * rows, chunk * ROWS_PER_CHUNK, end);
                }
                return;
            }
            float[] corr = corrByWorker[worker];
            if (corr == null || corr.length < TILE * batch) {
                corr = new float[TILE * batch];
                corrByWorker[worker] = corr;
            }
            // a tile of four weight rows decoded once (L1-resident, as exact integers in float lanes), then dotted with
            // every activation row, each activation load shared by the four rows
            for (int r0 = chunk * ROWS_PER_CHUNK; r0 < end; r0 += TILE) {
                int n = Math.min(TILE, end - r0);
                for (int t = 0; t < n; t++) {
                    tile[t].decode(kernel, w.data(), (r0 + t) * w.rowStride(), cols);
                    tile[t].toFloatLanes();
                }
                int b = n == TILE && batch > 1 ? kernel.dotTilePairs(tile, x, batch, out, r0, rows, corr) : 0;
                for (; b < batch; b++) {
                    if (n == TILE) {
                        kernel.dotFloat4(tile, x, b, out, b * rows + r0);
                    } else {
                        for (int t = 0; t < n; t++) {
                            out[b * rows + r0 + t] = kernel.dotFloat(tile[t], x, b);
                        }
                    }
                }
            }
        }
    }

    /**
     * Attention as a reusable parallel job: chunk = one row's group of {@link #group} query heads that share a KV head.
     * Over an F16 cache with the native kernels a group's scores and weighted values are one call each, so each key and
     * value is loaded and converted once for the group instead of once per head (a long prompt's attention: ~3× faster
     * with TinyLlama's eight heads per KV head); each head's sums stay in their order, so the results are the same.
     */
    private static final class AttentionJob implements ComputePool.Body {
        private final float[][] scores;
        private final float[][] inverses;
        private KvCache cache;
        private int layer;
        private AttentionShape shape;
        private BatchRows rows;
        private float[] q;
        private float[] out;
        private int window;
        /** Query heads per chunk: a divisor of the heads per KV head, smaller only to leave every thread a few chunks. */
        private int group;
        /** Floats between two heads' scores in a worker's {@link #scores}: the context and a chunk, in 16s. */
        private int stride;

        /** Native scores and weighted values over an F16 cache ({@code null}: Java). */
        private final NativeKernels nat;
        private final HeapSegments[] heap;
        /** Per worker: element offsets of positions {@code first..pos} of {@code slot}, as last computed this step. */
        private final long[][] offsets;
        private final int[][] offsetsFor;

        AttentionJob(int threads, NativeKernels nat, HeapSegments[] heap) {
            scores = new float[threads][];
            inverses = new float[threads][];
            offsets = new long[threads][];
            offsetsFor = new int[threads][3];
            this.nat = nat;
            this.heap = heap;
        }

        /** The chunks of this job: rows times head groups. */
        int chunks() {
            return rows.size() * (shape.heads() / group);
        }

        void set(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out, int window) {
            for (int[] f : offsetsFor) {
                f[0] = -1; // block tables may change between steps
            }
            this.window = window;
            this.cache = cache;
            this.layer = layer;
            this.shape = shape;
            this.rows = rows;
            this.q = q;
            this.out = out;
            int g = nat != null && cache.isF16() ? shape.heads() / shape.kvHeads() : 1;
            // a decode step of few rows keeps four chunks a thread at least (halving the groups while they divide)
            while (g % 2 == 0 && (long) rows.size() * (shape.heads() / g) < 4L * scores.length) {
                g /= 2;
            }
            this.group = g;
            this.stride = (cache.layout().contextLength() + GgmlExp.CHUNK + 15) & -16;
        }

        void clear() {
            cache = null;
            rows = null;
            q = null;
            out = null;
        }

        @Override
        public void run(int chunk, int worker) {
            int groups = shape.heads() / group;
            int b = chunk / groups;
            int h0 = chunk % groups * group;
            int hd = shape.headDim();
            int slot = rows.slot(b);
            int pos = rows.position(b);
            float[] s = scores[worker];
            if (s == null || s.length < group * stride) {
                s = new float[shape.heads() / shape.kvHeads() * stride]; // the largest group
                scores[worker] = s;
            }
            int qOff = b * shape.qDim() + h0 * hd;
            int kvOff = (h0 / (shape.heads() / shape.kvHeads())) * hd;
            int first = window > 0 ? Math.max(0, pos - window + 1) : 0;
            if (nat == null || !cache.isF16()) {
                javaHead(s, b, h0, qOff, kvOff, first, pos, slot);
                return;
            }
            long[] o = offsets[worker];
            if (o == null || o.length <= pos) {
                o = new long[cache.layout().contextLength()];
                offsets[worker] = o;
            }
            int[] f = offsetsFor[worker];
            if (f[0] != slot || f[1] != first || f[2] != pos) { // the heads of one row share them
                cache.elementOffsets(slot, first, pos, o);
                f[0] = slot;
                f[1] = first;
                f[2] = pos;
            }
            float[] inv = inverses[worker];
            if (inv == null || inv.length < group) {
                inv = new float[shape.heads() / shape.kvHeads()];
                inverses[worker] = inv;
            }
            HeapSegments hs = heap[worker];
            MemorySegment off = hs.of(o);
            MemorySegment ss = hs.of(s);
            nat.attentionScores(cache.keySegment(layer), off, first, pos, kvOff, hs.of(q), qOff, hd, group, hd, shape.scale(), ss,
                    stride);
            for (int j = 0; j < group; j++) {
                inv[j] = softmax(s, j * stride, first, pos);
            }
            nat.attentionValues(cache.valueSegment(layer), off, first, pos, kvOff, ss, stride, hs.of(inv), group, hs.of(out), qOff,
                    hd, hd);
        }

        /** One head in Java (an F32 cache, or no native kernels): scores, softmax, weighted values. */
        private void javaHead(float[] s, int b, int h, int qOff, int kvOff, int first, int pos, int slot) {
            int hd = shape.headDim();
            cache.dotKeys(layer, slot, first, pos, kvOff, q, qOff, hd, shape.scale(), s);
            float inv = softmax(s, 0, first, pos);
            for (int i = 0; i < hd; i++) {
                out[qOff + i] = 0f;
            }
            for (int t = first; t <= pos; t++) {
                cache.addValue(layer, slot, t, kvOff, s[t] * inv, out, qOff, hd);
            }
        }

        /**
         * The softmax of the scores {@code s[base + first..base + pos]} as ggml computes it over the row of cells: chunks
         * of 16 from cell 0 (masked cells are 0 after exp), each chunk summed in its reduce order and added to a double;
         * the exponentials in place, the returned inverse of their sum still to be applied.
         */
        private static float softmax(float[] s, int base, int first, int pos) {
            float max = Float.NEGATIVE_INFINITY;
            for (int t = base + first; t <= base + pos; t++) {
                max = Math.max(max, s[t]);
            }
            int c0 = first & -GgmlExp.CHUNK;
            int end = (pos | (GgmlExp.CHUNK - 1)) + 1;
            for (int t = base + c0; t < base + first; t++) {
                s[t] = Float.NEGATIVE_INFINITY;
            }
            for (int t = base + pos + 1; t < base + end; t++) {
                s[t] = Float.NEGATIVE_INFINITY;
            }
            return (float) (1.0 / softmaxChunks(s, base + c0, base + end, max));
        }
    }

    /**
     * {@code exp(s[t] − max)} in place for {@code t} in {@code [c0, end)} (whole chunks of {@link GgmlExp#CHUNK}), returning
     * their sum: each chunk summed in {@link QuantLanes#sum}'s order (written out here) and added to a double, as ggml does.
     * Its own compilation root ({@link JitDirectives}): inlined into the attention job, whose parse is near C2's node
     * cutoff, the lane sum was refused as a call and its vector boxed.
     */
    static double softmaxChunks(float[] s, int c0, int end, float max) {
        double sum = 0;
        for (int t = c0; t < end; t += GgmlExp.CHUNK) {
            FloatVector lo = GgmlExp.expf(FloatVector.fromArray(F8, s, t).sub(max));
            FloatVector hi = GgmlExp.expf(FloatVector.fromArray(F8, s, t + 8).sub(max));
            lo.intoArray(s, t);
            hi.intoArray(s, t + 8);
            FloatVector v = lo.add(hi);
            float a = (v.lane(0) + v.lane(4)) + (v.lane(2) + v.lane(6));
            float b = (v.lane(1) + v.lane(5)) + (v.lane(3) + v.lane(7));
            sum += a + b;
        }
        return sum;
    }

    @Override
    public void addBias(float[] x, float[] bias, int rows, int width) {
        int bound = F.loopBound(width);
        for (int r = 0; r < rows; r++) {
            int o = r * width;
            int i = 0;
            for (; i < bound; i += F.length()) {
                FloatVector.fromArray(F, x, o + i).add(FloatVector.fromArray(F, bias, i)).intoArray(x, o + i);
            }
            for (; i < width; i++) {
                x[o + i] += bias[i];
            }
        }
    }

    @Override
    public void geglu(float[] gate, float[] up, int rows, int cols) {
        // a table lookup per element (ggml's F16 GELU table); gathers would not pay off at FFN widths
        int n = rows * cols;
        for (int i = 0; i < n; i++) {
            gate[i] = GeluTable.gelu(gate[i]) * up[i];
        }
    }
}
