package ml.juno.engine.kernel.cpu;


import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kernel.GgmlExp;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvCache;

/**
 * Scalar reference kernels: the plainest correct loop for every operation of {@link ml.juno.engine.kernel.Backend},
 * in the order llama.cpp's reference paths use. The vector kernels are tested against these (with {@link ScalarBackend}).
 */
public final class ScalarKernels {

    private ScalarKernels() {}

    /**
     * Quantized weights: activations quantized to Q8_0/Q8_1/Q8_K, integer dot products as ggml's generic code.
     * {@code row} holds at least cols, {@code xq} is reused.
     */
    static void matmulQuant(WeightMatrix w, float[] x, float[] out, int batch, QuantRow row, QuantActivations xq) {
        CpuTypeTraits traits = CpuTypeTraits.of(w.type());
        QuantKernel kernel = traits.quantKernel();
        xq.quantize(x, batch, w.cols(), traits.activation());
        for (int r = 0; r < w.rows(); r++) {
            row.decodeScalar(kernel, w.data(), r * w.rowStride(), w.cols());
            for (int b = 0; b < batch; b++) {
                out[b * w.rows() + r] = kernel.dotScalar(row, xq, b);
            }
        }
    }

    /**
     * See {@link ml.juno.engine.kernel.Backend#matmul}, float weights. {@code rowBuf} ≥ cols, {@code xr} ≥ batch·cols,
     * {@code lanes} ≥ 64 (scratch of {@link #dot}).
     */
    public static void matmul(WeightMatrix w, float[] x, float[] out, int batch, float[] rowBuf, float[] xr, float[] lanes) {
        int cols = w.cols();
        CpuTypeTraits traits = CpuTypeTraits.of(w.type());
        FloatKernel kernel = (FloatKernel) traits.kernel();
        ActivationRounding.round(traits.activation(), x, xr, 0, batch * cols);
        boolean f16 = kernel.f16Order;
        for (int r = 0; r < w.rows(); r++) {
            kernel.decodeScalar(w.data(), r * w.rowStride(), rowBuf, 0, cols);
            for (int b = 0; b < batch; b++) {
                out[b * w.rows() + r] = dot(rowBuf, xr, b * cols, cols, f16, lanes);
            }
        }
    }

    /**
     * Scalar form of {@link FloatKernel#dot}, in the same order (llama.cpp's AVX-512 build): 16 lanes
     * for {@code n % 16 == 0} (tinyBLAS), ggml_vec_dot_f16's four 16-lane accumulators and double tail for other F16
     * rows ({@link #dotF16Row}), otherwise 8 lanes and a float tail. {@code lanes} ≥ 64.
     */
    static float dot(float[] w, float[] x, int xo, int n, boolean f16, float[] lanes) {
        java.util.Arrays.fill(lanes, 0f);
        if (n % 16 == 0) {
            for (int k = 0; k < n; k++) {
                lanes[k & 15] = Math.fma(w[k], x[xo + k], lanes[k & 15]);
            }
            return GgmlExp.sum16(lanes, 0);
        }
        if (f16) {
            return dotF16Row(w, x, xo, n, lanes);
        }
        int bound = n & ~7;
        for (int k = 0; k < bound; k++) {
            lanes[k & 7] = Math.fma(w[k], x[xo + k], lanes[k & 7]);
        }
        float s = ((lanes[0] + lanes[4]) + (lanes[2] + lanes[6])) + ((lanes[1] + lanes[5]) + (lanes[3] + lanes[7]));
        for (int k = bound; k < n; k++) {
            s += w[k] * x[xo + k];
        }
        return s;
    }

    /** ggml_vec_dot_f16's order: four 16-lane accumulators over chunks of 64, folded, then the tail in double. */
    static float dotF16Row(float[] w, float[] x, int xo, int n, float[] lanes) {
        java.util.Arrays.fill(lanes, 0f);
        int np = n & ~63;
        double s = 0;
        if (np > 0) {
            for (int k = 0; k < np; k++) {
                lanes[k & 63] = Math.fma(w[k], x[xo + k], lanes[k & 63]);
            }
            for (int l = 0; l < 16; l++) { // accumulators 0..3 of 16 lanes: (0 + 2) + (1 + 3)
                lanes[l] = (lanes[l] + lanes[32 + l]) + (lanes[16 + l] + lanes[48 + l]);
            }
            s = GgmlExp.sum16(lanes, 0);
        }
        for (int k = np; k < n; k++) {
            s += w[k] * x[xo + k];
        }
        return (float) s;
    }

    public static void embed(WeightMatrix table, int token, float[] out, int outOffset) {
        CpuTypeTraits.of(table.type()).kernel().decodeScalar(table.data(), token * table.rowStride(), out, outOffset, table.cols());
    }

    // ggml rms_norm: mean of squares in double, scale = 1/sqrtf(mean+eps), y = (x·scale)·w
    public static void rmsNorm(float[] x, float[] weight, float eps, float[] out, int batch, int dim) {
        for (int b = 0; b < batch; b++) {
            int o = b * dim;
            double sum = 0;
            for (int i = 0; i < dim; i++) {
                sum += x[o + i] * x[o + i];
            }
            float mean = (float) (sum / dim);
            float scale = 1f / (float) Math.sqrt(mean + eps);
            for (int i = 0; i < dim; i++) {
                out[o + i] = (x[o + i] * scale) * weight[i];
            }
        }
    }

    /** RoPE has no vector version to check: the backend's own scalar code is the reference. */
    public static void rope(float[] x, RopeShape shape, int batch, float[] cos, float[] sin) {
        CpuBackend.ropeScalar(x, shape, batch, cos, sin);
    }

    public static void attention(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out,
                                 float[] scores) {
        attention(cache, layer, shape, rows, q, out, scores, 0);
    }

    /** Attention over the last {@code window} positions of each row ({@code window <= 0}: all). */
    public static void attention(KvCache cache, int layer, AttentionShape shape, BatchRows rows, float[] q, float[] out,
                                 float[] scores, int window) {
        for (int b = 0; b < rows.size(); b++) {
            int pos = rows.position(b);
            int first = window > 0 ? Math.max(0, pos - window + 1) : 0;
            for (int h = 0; h < shape.heads(); h++) {
                attendHead(cache, layer, shape, rows.slot(b), first, pos, q, out, b * shape.qDim() + h * shape.headDim(),
                        (h / (shape.heads() / shape.kvHeads())) * shape.headDim(), scores);
            }
        }
    }

    private static void attendHead(KvCache cache, int layer, AttentionShape shape, int slot, int first, int pos, float[] q,
                                   float[] out, int qOff, int kvOff, float[] scores) {
        int hd = shape.headDim();
        float max = Float.NEGATIVE_INFINITY;
        for (int t = first; t <= pos; t++) {
            float s = 0f;
            for (int i = 0; i < hd; i++) {
                s += q[qOff + i] * cache.keyAt(layer, slot, t, kvOff + i);
            }
            s *= shape.scale();
            scores[t] = s;
            max = Math.max(max, s);
        }
        // ggml's softmax over the row of cells: chunks of 16 from cell 0, masked cells 0 after exp
        int c0 = first & -GgmlExp.CHUNK;
        int end = (pos | (GgmlExp.CHUNK - 1)) + 1;
        double sum = 0;
        for (int t = c0; t < end; t += GgmlExp.CHUNK) {
            for (int l = t; l < t + GgmlExp.CHUNK; l++) {
                scores[l] = l < first || l > pos ? 0f : GgmlExp.expf(scores[l] - max);
            }
            sum += GgmlExp.sum16(scores, t);
        }
        float inv = (float) (1.0 / sum);
        for (int i = 0; i < hd; i++) {
            out[qOff + i] = 0f;
        }
        for (int t = first; t <= pos; t++) {
            float p = scores[t] * inv;
            for (int i = 0; i < hd; i++) {
                out[qOff + i] += p * cache.valueAt(layer, slot, t, kvOff + i);
            }
        }
    }

    /** Per row of {@code cols}: ggml's SiLU (vector expf over full chunks of 16, the C library's after) times up. */
    public static void swiglu(float[] gate, float[] up, int rows, int cols) {
        for (int r = 0; r < rows; r++) {
            int full = cols & -GgmlExp.CHUNK;
            for (int i = r * cols; i < r * cols + cols; i++) {
                float g = gate[i];
                gate[i] = (i - r * cols < full ? GgmlExp.silu(g) : GgmlExp.siluTail(g)) * up[i];
            }
        }
    }

    public static void add(float[] acc, float[] x, int n) {
        for (int i = 0; i < n; i++) {
            acc[i] += x[i];
        }
    }

    public static void addBias(float[] x, float[] bias, int rows, int width) {
        for (int r = 0; r < rows; r++) {
            for (int i = 0; i < width; i++) {
                x[r * width + i] += bias[i];
            }
        }
    }

    /** GELU as ggml's CPU backend evaluates it ({@code GGML_GELU_FP16}): F16 in, F16 out, clamped outside ±10. */
    public static float geluAsGgml(float x) {
        if (x <= -10f) {
            return 0f;
        }
        if (x >= 10f) {
            return x;
        }
        float h = Float.float16ToFloat(Float.floatToFloat16(x));
        return Float.float16ToFloat(Float.floatToFloat16(GeluTable.tanhGelu(h)));
    }

    public static void geglu(float[] gate, float[] up, int n) {
        for (int i = 0; i < n; i++) {
            float g = gate[i];
            // x ≥ 10 multiplies x itself, as ggml does (not its F16 rounding)
            gate[i] = (g >= 10f ? g : geluAsGgml(g)) * up[i];
        }
    }
}
