package ml.juno.engine.kernel;

import ml.juno.engine.kv.KvCache;

/**
 * The operations a transformer forward pass needs, over a batch of rows. Activations are row-major {@code float[]}
 * buffers ({@code [batch][width]}), weights stay in their GGUF blocks ({@link WeightMatrix}), keys and values live in
 * a {@link KvCache}. Every operation computes each row with the same reduction order whatever else shares the batch,
 * so a row's result never depends on its batch mates (batch invariance). Implementations are not thread-safe: one
 * inference thread calls them; they may fan out to their own compute threads.
 */
public interface Backend extends AutoCloseable {

    /**
     * Makes the backend a model computes with, for the compute threads it may use ({@code EngineOptions.threads}); called
     * once the model's tensors have been checked, so a refused model leaves no backend behind. {@code Backends::select}
     * is the one processes use.
     */
    @FunctionalInterface
    interface Factory {
        Backend create(int threads);
    }

    /** Short name for logs, e.g. {@code cpu-vector-256}. */
    String name();

    /** Compute threads this backend uses. */
    int threads();

    /** Who computes the matrix products: {@code native} (Juno's C kernels) or {@code java}. */
    default String kind() {
        return "java";
    }

    /** The instruction set of those kernels, e.g. {@code avx512vnni}, {@code avx2}, or {@code vector256} for Java. */
    default String isa() {
        return name();
    }

    /**
     * {@code out[b][r] = Σ_k W[r][k]·x[b][k]} for {@code b < batch}; {@code x} is {@code [batch][w.cols()]},
     * {@code out} is {@code [batch][w.rows()]}. The activations are first rounded the way llama.cpp rounds them for
     * the weight's type (F16, BF16, Q8_0 or Q8_K), so the numerics match its CPU backend.
     */
    void matmul(WeightMatrix w, float[] x, float[] out, int batch);

    /**
     * {@code out0 = w0·x}, {@code out1 = w1·x} and, when {@code w2} is not {@code null}, {@code out2 = w2·x}: products of
     * one input (Q/K/V, gate/up), each exactly what {@link #matmul} gives. A backend may quantize the input once and run
     * them in one parallel step (fewer barriers per token).
     */
    default void matmul(WeightMatrix w0, float[] out0, WeightMatrix w1, float[] out1, WeightMatrix w2, float[] out2,
                        float[] x, int batch) {
        matmul(w0, x, out0, batch);
        matmul(w1, x, out1, batch);
        if (w2 != null) {
            matmul(w2, x, out2, batch);
        }
    }

    /** Row {@code token} of an embedding table, dequantized into {@code out[outOffset ..]}. */
    void embed(WeightMatrix table, int token, float[] out, int outOffset);

    /** {@code out[b] = x[b] / sqrt(mean(x[b]²) + eps) * weight}; {@code out} may be {@code x}. */
    void rmsNorm(float[] x, float[] weight, float eps, float[] out, int batch, int dim);

    /**
     * Rotary position embedding in place on {@code heads} heads of every row of {@code x} ({@code [batch][heads·headDim]}).
     * {@code cos}/{@code sin} are {@code [batch][ropeDims/2]}; NeoX pairs {@code (i, i+ropeDims/2)}, normal pairs
     * {@code (2i, 2i+1)}.
     */
    void rope(float[] x, RopeShape shape, int batch, float[] cos, float[] sin);

    /**
     * Causal attention for every row: row {@code b} of {@code q} ({@code [batch][heads·headDim]}) attends to positions
     * {@code 0..positions[b]} of its sequence slot in layer {@code layer} of the cache; the result goes to {@code out}
     * (same shape as {@code q}). The row's own key and value must already be stored.
     */
    void attention(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out);

    /**
     * {@code gate[r][i] = silu(gate[r][i]) · up[r][i]} over {@code rows} rows of {@code cols} ({@code [rows][cols]}).
     * Each row is computed on its own, so a row's values never depend on how many rows share the call.
     */
    void swiglu(float[] gate, float[] up, int rows, int cols);

    /** {@code acc[i] += x[i]} for {@code i < n}. */
    void add(float[] acc, float[] x, int n);

    /**
     * Runs the experts of {@code b}: for each, its rows gathered, gate and up, the activation, down, and the weighted
     * outputs into {@link ExpertBatch#mixed}; an incoming expert only after {@link ExpertBatch#arrive} (skipped when it
     * says its bytes failed). Each expert's values are what its products give for its rows alone, however the backend
     * spreads the experts over its threads. Default: one expert after another, each product as {@link #matmul}
     * computes it, the incoming ones last.
     */
    default void experts(ExpertBatch b) {
        for (int k = 0; k < b.count(); k++) {
            if (!b.incoming(k)) {
                expert(b, k);
            }
        }
        for (int k = 0; k < b.count(); k++) {
            if (b.incoming(k) && b.arrive(k)) {
                expert(b, k);
            }
        }
    }

    /**
     * Expert {@code k} of {@code b} (its bytes present) on the calling thread in {@code b}'s scratch, each product as
     * {@link #matmul} computes it: {@link #experts}'s default way, and a backend's way for an expert it runs alone.
     */
    default void expert(ExpertBatch b, int k) {
        int rows = b.rows(k);
        WeightMatrix gate = b.gate(k);
        b.gather(k, b.in);
        matmul(gate, b.gate, b.up(k), b.up, null, null, b.in, rows);
        if (b.gelu()) {
            geglu(b.gate, b.up, rows, gate.rows());
        } else {
            swiglu(b.gate, b.up, rows, gate.rows());
        }
        matmul(b.down(k), b.gate, b.out, rows);
        b.scatter(k, b.out);
    }

    /**
     * The bytes behind {@code w} are about to hold other weights (a streamed expert's slot is refilled): the backend
     * drops whatever it derived from them (the native kernels' packed copies), so no later product can use a copy of
     * the old bytes. {@code w} is not used again; another matrix over the same memory may follow. Default: nothing kept.
     */
    default void forget(WeightMatrix w) {}

    /**
     * The model's {@code matrices} (those every step multiplies by) are loaded: the backend may derive what it keeps of
     * them now rather than at their first product (the native backend's copies in huge pages). Default: nothing.
     */
    default void prepare(java.util.List<WeightMatrix> matrices) {}

    /**
     * The caller has no more work for now (a cluster node's step is done; the next comes a hop or a round trip later):
     * compute threads waiting for the next job sleep at once instead of spinning, which would take cores another
     * process on this machine (the next pipeline stage) is about to compute on. Default: no threads to rest.
     */
    default void rest() {}

    /**
     * {@code out[b] += rowScale[b] · B·(A·x[b])} for {@code b < batch} (a LoRA delta): {@code x} is
     * {@code [batch][w.in()]}, {@code out} is {@code [batch][w.out()]}, {@code tmp} holds at least
     * {@code batch · w.rank()} floats of scratch. Rows whose scale is 0 are left untouched. Each row is summed in one
     * fixed order (batch invariance). This Java reference is the implementation until a backend has a faster one.
     */
    default void addLowRank(LowRank w, float[] x, float[] out, int batch, float[] rowScale, float[] tmp) {
        int in = w.in();
        int r = w.rank();
        int o = w.out();
        checkLowRank(w, x, out, batch, rowScale, tmp);
        float[] a = w.a();
        float[] bm = w.b();
        for (int row = 0; row < batch; row++) {
            float scale = rowScale[row];
            if (scale == 0f) {
                continue;
            }
            int xo = row * in;
            int to = row * r;
            for (int j = 0; j < r; j++) {
                float sum = 0f;
                int ao = j * in;
                for (int k = 0; k < in; k++) {
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

    /**
     * The transposed product {@code dx[b][k] += Σ_r W[r][k]·dy[b][r]} for {@code b < batch} (the backward pass of
     * {@link #matmul} with respect to its input): {@code dy} is {@code [batch][w.rows()]}, {@code dx}
     * {@code [batch][w.cols()]}, accumulated into. The weights stay in their blocks; each row is decoded once per call
     * and added to every batch row in row order. This Java reference is the implementation until a backend has a
     * faster one (training only; inference never calls it).
     */
    default void matmulTransposedAdd(WeightMatrix w, float[] dy, float[] dx, int batch) {
        int rows = w.rows();
        int cols = w.cols();
        if (batch < 0 || dy.length < (long) batch * rows || dx.length < (long) batch * cols) {
            throw new IllegalArgumentException(w.name() + ": buffers too small for the transposed product of " + batch + " rows");
        }
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            Backends.decode(w.type(), w.data(), r * w.rowStride(), row, 0, cols);
            for (int b = 0; b < batch; b++) {
                float g = dy[b * rows + r];
                if (g == 0f) {
                    continue;
                }
                int o = b * cols;
                for (int k = 0; k < cols; k++) {
                    dx[o + k] += row[k] * g;
                }
            }
        }
    }

    /** The size checks of {@link #addLowRank}, shared by its implementations. */
    static void checkLowRank(LowRank w, float[] x, float[] out, int batch, float[] rowScale, float[] tmp) {
        if (batch < 0 || x.length < (long) batch * w.in() || out.length < (long) batch * w.out()
                || rowScale.length < batch || tmp.length < (long) batch * w.rank()) {
            throw new IllegalArgumentException(w.name() + ": buffers too small for " + batch + " rows (x " + x.length
                    + ", out " + out.length + ", scales " + rowScale.length + ", scratch " + tmp.length + ")");
        }
    }

    @Override
    void close();

    // --- operations added for the architectures beyond llama (qwen2/3, MoE, phi3, gemma3, sliding window)

    /** {@code x[r][i] += bias[i]} for {@code r < rows}, {@code i < width} (Q/K/V and output biases). */
    void addBias(float[] x, float[] bias, int rows, int width);

    /**
     * GELU-gated unit: {@code gate[r][i] = gelu(gate[r][i]) · up[r][i]} over {@code rows} rows of {@code cols}, GELU
     * being the tanh approximation evaluated as ggml's CPU backend does: the input rounded to F16, the result looked
     * up in (rounded to) F16, 0 below -10 and the identity above 10. Per row, like {@link #swiglu}.
     */
    void geglu(float[] gate, float[] up, int rows, int cols);

    /**
     * {@link #attention} limited to a sliding window: row {@code b} attends to positions
     * {@code max(0, p - window + 1) .. p} of its slot ({@code p = positions[b]}), i.e. a key at distance
     * {@code p - t >= window} is masked (llama.cpp's standard SWA). {@code window <= 0}: full causal attention.
     */
    void attention(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out, int window);
}
