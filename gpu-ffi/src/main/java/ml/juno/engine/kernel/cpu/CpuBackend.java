package ml.juno.engine.kernel.cpu;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.IdentityHashMap;
import java.util.Locale;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import ml.juno.engine.jfr.MatMulEvent;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import ml.juno.engine.kv.KvCache;

/**
 * The CPU backend: matrix products in Juno's native kernels ({@link NativeKernels}) where they loaded, else in Vector
 * API kernels, on a fixed {@link ComputePool}; the other operations in Java. Both kinds of product give bit-identical
 * results. {@link #create} picks the kind as the user asked ({@code --backend}, {@code JUNO_BACKEND}). Matrix products decode a tile of weight rows
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
    /**
     * Activation rows from which decoding each weight row once (to float lanes, then tiles of four weight rows × two
     * activation rows) beats building the quants in registers for every activation row. Measured per matrix on
     * TinyLlama shapes (2 threads, same-JVM A/B): Q4_K 5632×2048 fused vs decoded 1.8 vs 2.5 ms at 2 rows, equal at 4,
     * 4.4 vs 7.0 at 8; Q6_K 2048×5632 equal at 2, 3.4 vs 5.8 ms at 4; Q4_0/Q8_0, whose fused kernels are cheaper, from
     * eight. Q5_K (ffn_gate): fused 2.4 vs decoded 3.2 ms at 2 rows, equal at 3. Q3_K: 2.7 vs 3.0 ms at 2 rows, 5.1 vs
     * 4.1 at 3; Q2_K: 3.9 vs 6.2 ms at 3 rows, equal at 4. The other types have no fused kernel and always decode.
     */
    static int decodeBatch(GgmlType t) {
        return switch (t) {
            case Q3_K, Q5_K -> 3;
            case Q2_K, Q4_K -> 4;
            case Q4_0, Q8_0 -> 8;
            default -> 2;
        };
    }

    /** Multiply-adds below which a job is not worth fanning out. */
    private static final long PARALLEL_WORK = 1 << 16;

    static {
        JitDirectives.install();
    }

    private static final System.Logger LOG = System.getLogger("ml.juno.engine.backend");
    private static volatile boolean choiceLogged;

    private final ComputePool pool;
    /** The native kernels, or {@code null}: the Java ones. */
    private final NativeKernels nat;
    private final NativeMatmulJob nativeMatmul;
    /** Per worker: the heap segments of the arrays it passes to the native kernels. */
    private final HeapSegments[] heap;
    private final MatmulJob matmul;
    private final QuantMatmulJob quantMatmul;
    private final QuantActivations quantX = new QuantActivations();
    private final AttentionJob attention;
    private float[] rounded = new float[0];
    /**
     * Weights the native kernels take rearranged ({@link NativeKernels#packedBytes}: Q4_0), made on a matrix's first
     * product and kept, off-heap, until {@link #close}; {@code null} without native kernels or repacking. The model's
     * matrices live as long as the model, so this holds one copy of each.
     */
    private final Arena packArena;
    private final IdentityHashMap<WeightMatrix, MemorySegment> packed = new IdentityHashMap<>();

    /** A Java (Vector API) backend with {@code threads} compute threads (the calling thread included). */
    public CpuBackend(int threads) {
        this(threads, null);
    }

    /**
     * A backend whose matrix products run in {@code kernels} ({@code null}: the Java kernels), Q4_0 weights repacked
     * for them unless {@code -Djuno.native.repack=false}.
     */
    public CpuBackend(int threads, NativeKernels kernels) {
        this(threads, kernels, !"false".equals(System.getProperty("juno.native.repack")));
    }

    /**
     * A backend whose matrix products run in {@code kernels}; {@code repack}: whether the native kernels take Q4_0
     * weights repacked ({@link NativeKernels#packedBytes}: faster, within rounding of the Java kernels) or as stored
     * (bit-identical to them).
     */
    public CpuBackend(int threads, NativeKernels kernels, boolean repack) {
        this.pool = new ComputePool(threads);
        this.nat = kernels;
        this.heap = new HeapSegments[pool.threads()];
        for (int i = 0; i < heap.length; i++) {
            heap[i] = new HeapSegments();
        }
        this.nativeMatmul = kernels != null ? new NativeMatmulJob() : null;
        this.packArena = kernels != null && repack ? Arena.ofShared() : null;
        this.matmul = new MatmulJob(pool.threads());
        this.quantMatmul = new QuantMatmulJob(pool.threads());
        this.attention = new AttentionJob(pool.threads(), kernels, heap);
    }

    /** The backend kinds a user can ask for. */
    public enum Kind {
        /** Native kernels where they loaded, else Java (the default). */
        AUTO,
        NATIVE,
        JAVA;

        /** {@code native}, {@code java} or {@code auto} (any case); anything else is refused naming the choices. */
        public static Kind parse(String s) {
            String v = s == null ? "" : s.trim().toLowerCase(Locale.ROOT);
            return switch (v) {
                case "", "auto" -> AUTO;
                case "native" -> NATIVE;
                case "java" -> JAVA;
                default -> throw new IllegalArgumentException("unknown backend '" + s + "' (choose native or java)");
            };
        }
    }

    /** The kind asked for: system property {@code juno.backend}, else environment {@code JUNO_BACKEND}, else auto. */
    public static Kind requestedKind() {
        String p = System.getProperty("juno.backend");
        return Kind.parse(p != null ? p : System.getenv("JUNO_BACKEND"));
    }

    /**
     * A backend of the {@link #requestedKind requested kind} with {@code threads} threads. Native when asked for (or by
     * default) and the library loaded for this CPU; otherwise Java, and one log line says why.
     */
    public static CpuBackend create(int threads) {
        return create(threads, requestedKind());
    }

    public static CpuBackend create(int threads, Kind kind) {
        if (kind == Kind.JAVA) {
            logOnce(System.Logger.Level.INFO, "Juno backend: java (asked for)");
            return new CpuBackend(threads, null);
        }
        NativeKernels.Loaded l = NativeKernels.load();
        if (l.ok()) {
            logOnce(System.Logger.Level.INFO, "Juno backend: native (" + l.kernels().isa() + (l.kernels().amx() ? ", AMX tiles for Q4_K" : "") + ")");
            return new CpuBackend(threads, l.kernels());
        }
        logOnce(kind == Kind.NATIVE ? System.Logger.Level.WARNING : System.Logger.Level.INFO,
                "Juno backend: java, native kernels unavailable: " + l.problem());
        return new CpuBackend(threads, null);
    }

    private static void logOnce(System.Logger.Level level, String line) {
        if (!choiceLogged) {
            choiceLogged = true;
            LOG.log(level, line);
        }
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
        if (nat != null && nativeTakes(w, batch)) {
            nativeMatmul(w, out, null, null, null, null, x, batch);
            return;
        }
        if (QuantRow.supports(w.type())) {
            quantX.quantize(x, batch, w.cols(), QuantRow.kQuant(w.type()));
            if (batch >= decodeBatch(w.type()) || QuantDot.fusedRows(w.type()) == null) {
                quantX.toFloatLanes(batch, w.type() == GgmlType.Q6_K);
            }
            quantMatmul.set(w, quantX, out, batch);
            run((w.rows() + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, quantMatmul, (long) w.rows() * w.cols() * batch);
            quantMatmul.clear();
            return;
        }
        int n = batch * w.cols();
        if (rounded.length < n) {
            rounded = new float[n];
        }
        ActivationRounding.round(ActivationRounding.kindFor(w.type()), x, rounded, 0, n);
        matmul.set(w, rounded, out, batch);
        run((w.rows() + ROWS_PER_CHUNK - 1) / ROWS_PER_CHUNK, matmul, (long) w.rows() * w.cols() * batch);
        matmul.clear();
    }

    private boolean nativeTakes(WeightMatrix w, int batch) {
        return NativeKernels.supports(w.type(), w.cols()) && !nat.javaFaster(w.type(), batch);
    }

    /**
     * Two or three products of one input in one parallel step: the input quantized once per weight type, then each
     * worker makes one downcall per matrix for its share of the rows. The same results as separate calls.
     */
    @Override
    public void matmul(WeightMatrix w0, float[] out0, WeightMatrix w1, float[] out1, WeightMatrix w2, float[] out2,
                       float[] x, int batch) {
        if (nat == null || MatMulEvent.enabled() || !nativeTakes(w0, batch) || !nativeTakes(w1, batch)
                || (w2 != null && !nativeTakes(w2, batch)) || w1.cols() != w0.cols() || (w2 != null && w2.cols() != w0.cols())) {
            Backend.super.matmul(w0, out0, w1, out1, w2, out2, x, batch);
            return;
        }
        nativeMatmul(w0, out0, w1, out1, w2, out2, x, batch);
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
     * one downcall per matrix for its share of the rows.
     */
    private void nativeMatmul(WeightMatrix w0, float[] out0, WeightMatrix w1, float[] out1, WeightMatrix w2, float[] out2,
                              float[] x, int batch) {
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
            job.packed[i] = packedFor(w);
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
                nat.quantize(w.type(), packed, xs, batch, w.cols(), job.xq[i]);
            }
            work += (long) w.rows() * w.cols() * batch;
            minRows = Math.min(minRows, w.rows());
        }
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
        if (packArena == null || nat.packedBytes(w) < 0) {
            return null;
        }
        MemorySegment p = packed.get(w);
        if (p == null) {
            p = nat.repack(w, packArena);
            packed.put(w, p);
        }
        return p;
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

    @Override
    public void embed(WeightMatrix table, int token, float[] out, int outOffset) {
        VectorDecode.decode(table.type(), table.data(), token * table.rowStride(), out, outOffset, table.cols());
    }

    @Override
    public void rmsNorm(float[] x, float[] weight, float eps, float[] out, int batch, int dim) {
        for (int b = 0; b < batch; b++) {
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
        ScalarKernels.rope(x, shape, batch, cos, sin);
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
        run(rows.size() * shape.heads(), attention, 2 * work);
        attention.clear();
    }

    @Override
    public void swiglu(float[] gate, float[] up, int rows, int cols) {
        // per row, as ggml's AVX-512 build: its vector expf over full chunks of 16 (two 8-lane halves here), the C
        // library's for the tail after the last full chunk (ScalarKernels.swiglu is the reference)
        for (int r = 0; r < rows; r++) {
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

    @Override
    public void add(float[] acc, float[] x, int n) {
        int i = 0;
        for (int bound = F.loopBound(n); i < bound; i += F.length()) {
            FloatVector.fromArray(F, acc, i).add(FloatVector.fromArray(F, x, i)).intoArray(acc, i);
        }
        for (; i < n; i++) {
            acc[i] += x[i];
        }
    }

    @Override
    public void close() {
        pool.close();
        if (packArena != null && packArena.scope().isAlive()) {
            packed.clear();
            packArena.close();
        }
        for (int i = 0; i < nativeArenas.length; i++) {
            if (nativeArenas[i] != null) {
                nativeArenas[i].close();
                nativeArenas[i] = null;
                nativeX[i] = MemorySegment.NULL;
            }
        }
    }

    /**
     * Dot product of {@code n} floats in the order llama.cpp's CPU backend (its AVX-512 build, which made the reference
     * outputs) sums a row of F32/F16/BF16 weights: for {@code n % 16 == 0} tinyBLAS's, one 16-lane FMA accumulator
     * (element {@code i} in lane {@code i % 16}); otherwise one 8-lane accumulator and a scalar tail ({@link #dotF16Row}
     * is the F16 case). Fixed 256-bit vectors, so every x86 machine gives the same bits: sixteen lanes are two halves,
     * and {@code lo + hi} reduced by {@link QuantDot#sum} is {@code _mm512_reduce_add_ps}'s tree. Activations rounded
     * to F16 make this order matter: a one-ulp difference moves a value across an F16 rounding boundary of the next
     * product, and tiny random models amplify that to 1e-3 on the logits.
     */
    static float dot(float[] a, int ao, float[] b, int bo, int n) {
        if (n % 16 == 0) {
            FloatVector lo = FloatVector.zero(F8);
            FloatVector hi = lo;
            for (int i = 0; i < n; i += 16) {
                lo = f8(a, ao + i).fma(f8(b, bo + i), lo);
                hi = f8(a, ao + i + 8).fma(f8(b, bo + i + 8), hi);
            }
            return QuantDot.sum(lo.add(hi));
        }
        FloatVector acc = FloatVector.zero(F8);
        int i = 0;
        for (int bound = n & ~7; i < bound; i += 8) {
            acc = f8(a, ao + i).fma(f8(b, bo + i), acc);
        }
        float s = QuantDot.sum(acc);
        for (; i < n; i++) {
            s += a[ao + i] * b[bo + i];
        }
        return s;
    }

    /**
     * An F16 row whose length is not a multiple of 16, in ggml_vec_dot_f16's order (what llama.cpp falls back to when
     * tinyBLAS cannot take the row): four 16-lane accumulators over chunks of 64, folded (0+2, 1+3, then 0+1) and
     * reduced as {@link #dot} reduces, then the remaining products added in double.
     */
    static float dotF16Row(float[] a, int ao, float[] b, int bo, int n) {
        int np = n & ~63;
        double s = 0;
        if (np > 0) {
            FloatVector z = FloatVector.zero(F8);
            FloatVector a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z, a7 = z;
            for (int i = 0; i < np; i += 64) {
                a0 = f8(a, ao + i).fma(f8(b, bo + i), a0);
                a1 = f8(a, ao + i + 8).fma(f8(b, bo + i + 8), a1);
                a2 = f8(a, ao + i + 16).fma(f8(b, bo + i + 16), a2);
                a3 = f8(a, ao + i + 24).fma(f8(b, bo + i + 24), a3);
                a4 = f8(a, ao + i + 32).fma(f8(b, bo + i + 32), a4);
                a5 = f8(a, ao + i + 40).fma(f8(b, bo + i + 40), a5);
                a6 = f8(a, ao + i + 48).fma(f8(b, bo + i + 48), a6);
                a7 = f8(a, ao + i + 56).fma(f8(b, bo + i + 56), a7);
            }
            // accumulator j is the pair (a_2j, a_2j+1); fold 0+2 and 1+3, then 0+1; then lanes i + (i+8)
            FloatVector lo = a0.add(a4).add(a2.add(a6));
            FloatVector hi = a1.add(a5).add(a3.add(a7));
            s = QuantDot.sum(lo.add(hi));
        }
        for (int i = np; i < n; i++) {
            s += a[ao + i] * b[bo + i]; // products of F16 values are exact in float
        }
        return (float) s;
    }

    private static FloatVector f8(float[] a, int i) {
        return FloatVector.fromArray(F8, a, i);
    }

    /** The matrix product as a reusable parallel job: chunk = {@value #ROWS_PER_CHUNK} weight rows. */
    private static final class MatmulJob implements ComputePool.Body {
        private final float[][] tiles;
        private WeightMatrix w;
        private float[] x;
        private float[] out;
        private int batch;

        MatmulJob(int threads) {
            tiles = new float[threads][];
        }

        void set(WeightMatrix w, float[] x, float[] out, int batch) {
            this.w = w;
            this.x = x;
            this.out = out;
            this.batch = batch;
        }

        void clear() {
            w = null;
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
            boolean f16Tail = w.type() == GgmlType.F16 && cols % 16 != 0;
            for (int r0 = chunk * ROWS_PER_CHUNK; r0 < end; r0 += TILE) {
                int tileRows = Math.min(TILE, end - r0);
                if (batch < TILE || tileRows < TILE || cols % 16 != 0) {
                    for (int r = r0; r < r0 + tileRows; r++) {
                        VectorDecode.decode(w.type(), w.data(), r * w.rowStride(), tile, 0, cols);
                        for (int b = 0; b < batch; b++) {
                            out[b * rows + r] = f16Tail ? dotF16Row(tile, 0, x, b * cols, cols) : dot(tile, 0, x, b * cols, cols);
                        }
                    }
                } else {
                    for (int t = 0; t < TILE; t++) {
                        VectorDecode.decode(w.type(), w.data(), (r0 + t) * w.rowStride(), tile, t * cols, cols);
                    }
                    for (int b = 0; b < batch; b++) {
                        dot4(tile, cols, x, b * cols, out, b * rows + r0);
                    }
                }
            }
        }

        /**
         * Four dot products sharing each activation load, for {@code n % 16 == 0}; each one identical to {@link #dot}
         * (two 8-lane accumulators per row).
         */
        private static void dot4(float[] w, int n, float[] x, int xo, float[] out, int oo) {
            FloatVector a0 = FloatVector.zero(F8);
            FloatVector a1 = a0;
            FloatVector a2 = a0;
            FloatVector a3 = a0;
            FloatVector b0 = a0;
            FloatVector b1 = a0;
            FloatVector b2 = a0;
            FloatVector b3 = a0;
            for (int i = 0; i < n; i += 16) {
                FloatVector xl = f8(x, xo + i);
                FloatVector xh = f8(x, xo + i + 8);
                a0 = f8(w, i).fma(xl, a0);
                b0 = f8(w, i + 8).fma(xh, b0);
                a1 = f8(w, n + i).fma(xl, a1);
                b1 = f8(w, n + i + 8).fma(xh, b1);
                a2 = f8(w, 2 * n + i).fma(xl, a2);
                b2 = f8(w, 2 * n + i + 8).fma(xh, b2);
                a3 = f8(w, 3 * n + i).fma(xl, a3);
                b3 = f8(w, 3 * n + i + 8).fma(xh, b3);
            }
            out[oo] = QuantDot.sum(a0.add(b0));
            out[oo + 1] = QuantDot.sum(a1.add(b1));
            out[oo + 2] = QuantDot.sum(a2.add(b2));
            out[oo + 3] = QuantDot.sum(a3.add(b3));
        }
    }

    /**
     * Quantized matrix product as a reusable parallel job: each weight row is decoded once into integer quants and
     * scales ({@link QuantRow}), then dotted with every quantized activation row of the batch.
     */
    private static final class QuantMatmulJob implements ComputePool.Body {
        private final QuantRow[][] tilesByWorker;
        /** Per worker: a tile's K-quant min terms with every activation row ({@link QuantDot#kCorrections}). */
        private final float[][] corrByWorker;
        private WeightMatrix w;
        private QuantActivations x;
        private float[] out;
        private int batch;

        QuantMatmulJob(int threads) {
            tilesByWorker = new QuantRow[threads][];
            corrByWorker = new float[threads][];
        }

        void set(WeightMatrix w, QuantActivations x, float[] out, int batch) {
            this.w = w;
            this.x = x;
            this.out = out;
            this.batch = batch;
        }

        void clear() {
            w = null;
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
            QuantDot.Rows fused = batch < decodeBatch(w.type()) ? QuantDot.fusedRows(w.type()) : null;
            if (fused != null) {
                // few activation rows: quants built in registers straight from the mapped blocks, no decode buffer
                // (bit-identical to the path below); the chunk's weight rows stay in cache between activation rows
                for (int b = 0; b < batch; b++) {
                    fused.run(w.data(), w.rowStride(), cols, x, b, out, b * rows, chunk * ROWS_PER_CHUNK, end);
                }
                return;
            }
            boolean kQuant = QuantRow.kQuant(w.type());
            // a tile of four weight rows decoded once (L1-resident, as exact integers in float lanes), then dotted with
            // every activation row, each activation load shared by the four rows
            for (int r0 = chunk * ROWS_PER_CHUNK; r0 < end; r0 += TILE) {
                int n = Math.min(TILE, end - r0);
                for (int t = 0; t < n; t++) {
                    tile[t].decode(w.type(), w.data(), (r0 + t) * w.rowStride(), cols);
                    tile[t].toFloatLanes();
                }
                int b = 0;
                if (n == TILE && batch > 1) {
                    if (w.type() == GgmlType.Q6_K) {
                        for (; b + 1 < batch; b += 2) {
                            QuantDot.dotFloat4x2Q6(tile, x, b, out, b * rows + r0, rows);
                        }
                    } else if (kQuant) {
                        // the four rows' min terms with every activation row, eight activation rows per vector
                        float[] corr = corrByWorker[worker];
                        if (corr == null || corr.length < TILE * batch) {
                            corr = new float[TILE * batch];
                            corrByWorker[worker] = corr;
                        }
                        QuantDot.kCorrections(tile, TILE, x, batch, corr);
                        for (; b + 1 < batch; b += 2) {
                            QuantDot.dotFloat4x2K(tile, x, b, out, b * rows + r0, rows, corr, b, batch);
                        }
                    } else {
                        for (; b + 1 < batch; b += 2) {
                            QuantDot.dotFloat4x2Legacy(tile, x, b, out, b * rows + r0, rows);
                        }
                    }
                }
                for (; b < batch; b++) {
                    if (n == TILE) {
                        QuantDot.dotFloat4(tile, x, b, out, b * rows + r0);
                    } else {
                        for (int t = 0; t < n; t++) {
                            out[b * rows + r0 + t] = QuantDot.dotFloat(tile[t], x, b);
                        }
                    }
                }
            }
        }
    }

    /** Attention as a reusable parallel job: chunk = one (row, head) pair. */
    private static final class AttentionJob implements ComputePool.Body {
        private final float[][] scores;
        private KvCache cache;
        private int layer;
        private AttentionShape shape;
        private BatchRows rows;
        private float[] q;
        private float[] out;
        private int window;

        /** Native scores and weighted values over an F16 cache ({@code null}: Java). */
        private final NativeKernels nat;
        private final HeapSegments[] heap;
        /** Per worker: element offsets of positions {@code first..pos} of {@code slot}, as last computed this step. */
        private final long[][] offsets;
        private final int[][] offsetsFor;

        AttentionJob(int threads, NativeKernels nat, HeapSegments[] heap) {
            scores = new float[threads][];
            offsets = new long[threads][];
            offsetsFor = new int[threads][3];
            this.nat = nat;
            this.heap = heap;
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
        }

        void clear() {
            cache = null;
            rows = null;
            q = null;
            out = null;
        }

        @Override
        public void run(int chunk, int worker) {
            int heads = shape.heads();
            int b = chunk / heads;
            int h = chunk % heads;
            int hd = shape.headDim();
            int slot = rows.slot(b);
            int pos = rows.position(b);
            float[] s = scores[worker];
            if (s == null || s.length < pos + GgmlExp.CHUNK) {
                s = new float[cache.layout().contextLength() + GgmlExp.CHUNK];
                scores[worker] = s;
            }
            int qOff = b * shape.qDim() + h * hd;
            int kvOff = (h / (heads / shape.kvHeads())) * hd;
            int first = window > 0 ? Math.max(0, pos - window + 1) : 0;
            MemorySegment off = null;
            HeapSegments hs = heap[worker];
            if (nat != null && cache.isF16()) {
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
                off = hs.of(o);
                nat.attentionScores(cache.keySegment(layer), off, first, pos, kvOff, hs.of(q), qOff, hd, shape.scale(), hs.of(s));
            } else {
                cache.dotKeys(layer, slot, first, pos, kvOff, q, qOff, hd, shape.scale(), s);
            }
            float max = Float.NEGATIVE_INFINITY;
            for (int t = first; t <= pos; t++) {
                max = Math.max(max, s[t]);
            }
            // ggml's softmax over the row of cells: chunks of 16 from cell 0 (masked cells are 0 after exp), each chunk
            // summed in its reduce order and added to a double
            int c0 = first & -GgmlExp.CHUNK;
            int end = (pos | (GgmlExp.CHUNK - 1)) + 1;
            for (int t = c0; t < first; t++) {
                s[t] = Float.NEGATIVE_INFINITY;
            }
            for (int t = pos + 1; t < end; t++) {
                s[t] = Float.NEGATIVE_INFINITY;
            }
            float inv = (float) (1.0 / softmaxChunks(s, c0, end, max));
            if (off != null) {
                nat.attentionValues(cache.valueSegment(layer), off, first, pos, kvOff, hs.of(s), inv, hs.of(out), qOff, hd);
                return;
            }
            for (int i = 0; i < hd; i++) {
                out[qOff + i] = 0f;
            }
            for (int t = first; t <= pos; t++) {
                cache.addValue(layer, slot, t, kvOff, s[t] * inv, out, qOff, hd);
            }
        }
    }

    /**
     * {@code exp(s[t] − max)} in place for {@code t} in {@code [c0, end)} (whole chunks of {@link GgmlExp#CHUNK}), returning
     * their sum: each chunk summed in {@link QuantDot#sum}'s order (written out here) and added to a double, as ggml does.
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
