package ml.juno.engine.lora;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.ModelTensors;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.model.ShardTensors;
import ml.juno.engine.model.TransformerDecoder;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.model.block.Rope;

/**
 * The forward and backward pass of a {@code llama} decoder over one sequence with LoRA factors as the only trainable
 * parameters: the base stays in its (memory-mapped, possibly quantized) blocks; products with it go through the
 * {@link Backend} ({@link Backend#matmul} forward, {@link Backend#matmulTransposedAdd} backward), activations of every
 * layer are kept for the backward pass. The loss is the mean cross-entropy of the next token over the positions the
 * mask selects. Gradients of the quantized base's activation rounding are taken as identity (straight-through); on F32
 * weights they are exact, which {@code LoraGradientTest} checks against finite differences.
 *
 * <p>Only the {@code llama} architecture (no biases, no Q/K norms, no post-norms, unfused tensors) is built; others
 * are refused by name.
 */
public final class LoraTrainer {
    private final Backend backend;
    private final ModelConfig config;
    private final Rope rope;
    private final WeightMatrix embeddings;
    private final WeightMatrix output;
    private final float[] outputNorm;
    private final Layer[] layers;
    private final int dim;
    private final int vocab;
    private final AttentionShape att;
    private final RopeShape qRope;
    private final RopeShape kRope;

    private record Layer(float[] attnNorm, float[] ffnNorm, Map<Projection, WeightMatrix> w) {}

    private Dropout dropout; // of the run in progress

    public LoraTrainer(GgufFile file, ModelConfig config, Backend backend) {
        if (!config.architecture().equals("llama")) {
            throw new IllegalArgumentException("LoRA training supports the llama architecture so far; this model is "
                    + config.architecture() + " (not implemented yet)");
        }
        this.backend = backend;
        this.config = config;
        this.dim = config.dims().embedding();
        this.vocab = config.dims().vocab();
        this.att = config.attention();
        int layersN = config.dims().layers();
        ShardTensors t = new ShardTensors(file, config, ShardSpec.whole(layersN), AllReduce.NONE);
        ModelTensors m = t.tensors();
        this.rope = TransformerDecoder.standardRope(t);
        this.qRope = new RopeShape(att.heads(), att.headDim(), rope.dims(), rope.neox());
        this.kRope = new RopeShape(att.kvHeads(), att.headDim(), rope.dims(), rope.neox());
        this.embeddings = m.matrix(TensorNames.global(TensorNames.TOKEN_EMBD), dim, vocab);
        this.output = m.optionalMatrix(TensorNames.global(TensorNames.OUTPUT), dim, vocab).orElse(embeddings);
        this.outputNorm = m.vector(TensorNames.global(TensorNames.OUTPUT_NORM), dim);
        this.layers = new Layer[layersN];
        for (int l = 0; l < layersN; l++) {
            for (String bias : List.of(TensorNames.ATTN_Q, TensorNames.ATTN_K, TensorNames.ATTN_V, TensorNames.ATTN_OUT)) {
                if (m.has(TensorNames.block(l, bias, TensorNames.BIAS))) {
                    throw new IllegalArgumentException("LoRA training of a model with attention biases is not implemented yet");
                }
            }
            Map<Projection, WeightMatrix> w = new EnumMap<>(Projection.class);
            var aw = t.attention(l);
            w.put(Projection.Q, aw.q());
            w.put(Projection.K, aw.k());
            w.put(Projection.V, aw.v());
            w.put(Projection.O, aw.o());
            int ffn = config.dims().ffn();
            w.put(Projection.GATE, m.matrix(TensorNames.block(l, TensorNames.FFN_GATE), dim, ffn));
            w.put(Projection.UP, m.matrix(TensorNames.block(l, TensorNames.FFN_UP), dim, ffn));
            w.put(Projection.DOWN, m.matrix(TensorNames.block(l, TensorNames.FFN_DOWN), ffn, dim));
            layers[l] = new Layer(m.vector(TensorNames.block(l, TensorNames.ATTN_NORM), dim),
                    m.vector(TensorNames.block(l, TensorNames.FFN_NORM), dim), w);
        }
    }

    public ModelConfig config() {
        return config;
    }

    /** The gradients of every pair of an adapter, same shapes as its A and B. */
    public static final class Gradients {
        final Map<LoraPair, float[][]> by = new java.util.IdentityHashMap<>();

        Gradients(LoraAdapter a) {
            for (LoraPair p : a.pairs()) {
                by.put(p, new float[][] {new float[p.a().length], new float[p.b().length]});
            }
        }

        public float[] a(LoraPair p) {
            return by.get(p)[0];
        }

        public float[] b(LoraPair p) {
            return by.get(p)[1];
        }
    }

    /** Fresh zero gradients for {@code adapter}. */
    public static Gradients gradients(LoraAdapter adapter) {
        return new Gradients(adapter);
    }

    /**
     * LoRA dropout on the adapter's input: each element of the input of each adapted projection is zeroed with
     * probability {@code p} and the rest scaled by {@code 1/(1-p)}, the base product seeing the input unchanged. The
     * masks are a function of {@code seed}, the layer and the projection only, so two runs with one {@code Dropout}
     * see the same masks (which the gradient check needs).
     */
    public record Dropout(float p, long seed) {
        public Dropout {
            if (!(p >= 0f && p < 1f)) {
                throw new IllegalArgumentException("LoRA dropout must be in [0, 1), got " + p);
            }
        }

        /** The multipliers (0 or {@code 1/(1-p)}) of an {@code [n][in]} input of {@code layer}'s {@code target}. */
        float[] mask(int layer, Projection target, int n, int in) {
            java.util.SplittableRandom r = new java.util.SplittableRandom(seed * 0x9E3779B97F4A7C15L + layer * 31L + target.ordinal());
            float keep = 1f / (1f - p);
            float[] m = new float[n * in];
            for (int i = 0; i < m.length; i++) {
                m[i] = r.nextDouble() < p ? 0f : keep;
            }
            return m;
        }
    }

    /** What the forward pass keeps of one layer for the backward pass (all {@code [T][width]}). */
    private static final class Saved {
        float[] xIn, h, q, k, v, probs, o, xMid, h2, g, u, act;
        final Map<Projection, float[]> t = new EnumMap<>(Projection.class); // A·x per adapted projection, [T][rank]
        final Map<Projection, float[]> drop = new EnumMap<>(Projection.class); // dropout multipliers, [T][in]
    }

    private long forwardNanos;
    private long backwardNanos;

    /** The time the last {@link #run} spent in its forward pass (the loss included). */
    public long forwardNanos() {
        return forwardNanos;
    }

    /** The time the last {@link #run} spent in its backward pass (0 without gradients). */
    public long backwardNanos() {
        return backwardNanos;
    }

    /**
     * The loss of {@code tokens} (mean next-token cross-entropy over positions {@code i} with {@code mask[i]}: the
     * prediction of {@code tokens[i+1]}), and, when {@code grads} is not {@code null}, its gradients with respect to
     * the factors of {@code adapter} (added to {@code grads}; scaled by {@code gradScale}).
     */
    public double run(LoraAdapter adapter, int[] tokens, boolean[] mask, Gradients grads, float gradScale) {
        return run(adapter, tokens, mask, grads, gradScale, null);
    }

    /** {@link #run(LoraAdapter, int[], boolean[], Gradients, float)} with LoRA dropout ({@code null}: none). */
    public double run(LoraAdapter adapter, int[] tokens, boolean[] mask, Gradients grads, float gradScale, Dropout dropout) {
        long start = System.nanoTime();
        this.dropout = dropout == null || dropout.p() == 0f ? null : dropout;
        int n = tokens.length;
        if (n < 2 || mask.length != n) {
            throw new IllegalArgumentException("a training sequence needs at least 2 tokens and one mask entry each");
        }
        int targets = 0;
        for (int i = 0; i < n - 1; i++) {
            targets += mask[i] ? 1 : 0;
        }
        if (targets == 0) {
            throw new IllegalArgumentException("no position of the sequence is trained (empty mask)");
        }
        int qd = att.qDim();
        int kvd = att.kvDim();
        int ffn = config.dims().ffn();
        int L = layers.length;
        BatchRows rows = new BatchRows(n);
        for (int i = 0; i < n; i++) {
            rows.add(0, i);
        }
        float[] cos = new float[n * rope.dims() / 2];
        float[] sin = new float[n * rope.dims() / 2];
        rope.angles(rows, n, cos, sin);
        float[] x = new float[n * dim];
        for (int i = 0; i < n; i++) {
            backend.embed(embeddings, tokens[i], x, i * dim);
        }
        Saved[] saved = new Saved[L];
        for (int l = 0; l < L; l++) {
            Layer ly = layers[l];
            Saved s = saved[l] = new Saved();
            s.xIn = x.clone();
            s.h = rms(x, ly.attnNorm, n);
            s.q = project(adapter, l, Projection.Q, ly, s.h, n, qd, s);
            s.k = project(adapter, l, Projection.K, ly, s.h, n, kvd, s);
            s.v = project(adapter, l, Projection.V, ly, s.h, n, kvd, s);
            backend.rope(s.q, qRope, n, cos, sin);
            backend.rope(s.k, kRope, n, cos, sin);
            s.probs = new float[att.heads() * n * n];
            s.o = attention(s.q, s.k, s.v, s.probs, n);
            float[] proj = project(adapter, l, Projection.O, ly, s.o, n, dim, s);
            for (int i = 0; i < n * dim; i++) {
                x[i] += proj[i];
            }
            s.xMid = x.clone();
            s.h2 = rms(x, ly.ffnNorm, n);
            s.g = project(adapter, l, Projection.GATE, ly, s.h2, n, ffn, s);
            s.u = project(adapter, l, Projection.UP, ly, s.h2, n, ffn, s);
            s.act = new float[n * ffn];
            for (int i = 0; i < n * ffn; i++) {
                float g = s.g[i];
                s.act[i] = g / (1f + (float) Math.exp(-g)) * s.u[i];
            }
            float[] down = project(adapter, l, Projection.DOWN, ly, s.act, n, dim, s);
            for (int i = 0; i < n * dim; i++) {
                x[i] += down[i];
            }
        }
        float[] xFinal = x.clone();
        float[] hf = rms(x, outputNorm, n);
        float[] logits = new float[n * vocab];
        backend.matmul(output, hf, logits, n);
        double loss = 0;
        float[] dlogits = grads == null ? null : new float[n * vocab];
        for (int i = 0; i < n - 1; i++) {
            if (!mask[i]) {
                continue;
            }
            int o = i * vocab;
            double max = Double.NEGATIVE_INFINITY;
            for (int v = 0; v < vocab; v++) {
                max = Math.max(max, logits[o + v]);
            }
            double sum = 0;
            for (int v = 0; v < vocab; v++) {
                sum += Math.exp(logits[o + v] - max);
            }
            int target = tokens[i + 1];
            loss += Math.log(sum) + max - logits[o + target];
            if (dlogits != null) {
                for (int v = 0; v < vocab; v++) {
                    dlogits[o + v] = (float) (Math.exp(logits[o + v] - max) / sum / targets);
                }
                dlogits[o + target] -= 1f / targets;
            }
        }
        loss /= targets;
        long forwardEnd = System.nanoTime();
        forwardNanos = forwardEnd - start;
        backwardNanos = 0;
        if (grads == null) {
            return loss;
        }
        // ---- backward
        if (gradScale != 1f) {
            for (int i = 0; i < dlogits.length; i++) {
                dlogits[i] *= gradScale;
            }
        }
        float[] dhf = new float[n * dim];
        backend.matmulTransposedAdd(output, dlogits, dhf, n);
        float[] dx = new float[n * dim];
        rmsBack(xFinal, outputNorm, dhf, dx, n);
        for (int l = L - 1; l >= 0; l--) {
            Layer ly = layers[l];
            Saved s = saved[l];
            // FFN: x += down(act)
            float[] dact = new float[n * ffn];
            projectBack(adapter, l, Projection.DOWN, ly, s.act, dx, dact, n, s, grads);
            float[] dg = new float[n * ffn];
            float[] du = new float[n * ffn];
            for (int i = 0; i < n * ffn; i++) {
                float g = s.g[i];
                float sg = 1f / (1f + (float) Math.exp(-g));
                du[i] = dact[i] * g * sg;
                dg[i] = dact[i] * s.u[i] * sg * (1f + g * (1f - sg));
            }
            float[] dh2 = new float[n * dim];
            projectBack(adapter, l, Projection.GATE, ly, s.h2, dg, dh2, n, s, grads);
            projectBack(adapter, l, Projection.UP, ly, s.h2, du, dh2, n, s, grads);
            rmsBack(s.xMid, ly.ffnNorm, dh2, dx, n);
            // attention: x += o-proj(attention(q, k, v))
            float[] dout = new float[n * qd];
            projectBack(adapter, l, Projection.O, ly, s.o, dx, dout, n, s, grads);
            float[] dq = new float[n * qd];
            float[] dk = new float[n * kvd];
            float[] dv = new float[n * kvd];
            attentionBack(s, dout, dq, dk, dv, n);
            float[] negSin = sin.clone();
            for (int i = 0; i < negSin.length; i++) {
                negSin[i] = -negSin[i];
            }
            backend.rope(dq, qRope, n, cos, negSin); // the transpose of a rotation is the inverse rotation
            backend.rope(dk, kRope, n, cos, negSin);
            float[] dh = new float[n * dim];
            projectBack(adapter, l, Projection.Q, ly, s.h, dq, dh, n, s, grads);
            projectBack(adapter, l, Projection.K, ly, s.h, dk, dh, n, s, grads);
            projectBack(adapter, l, Projection.V, ly, s.h, dv, dh, n, s, grads);
            rmsBack(s.xIn, ly.attnNorm, dh, dx, n);
        }
        backwardNanos = System.nanoTime() - forwardEnd;
        return loss;
    }

    private float[] rms(float[] x, float[] w, int n) {
        float[] out = new float[n * dim];
        backend.rmsNorm(x, w, config.normEps(), out, n, dim);
        return out;
    }

    /** {@code dx += ∂/∂x} of {@code y = x·r·w}, {@code r = (mean(x²)+eps)^-½}, per row. */
    private void rmsBack(float[] x, float[] w, float[] dy, float[] dx, int n) {
        for (int i = 0; i < n; i++) {
            int o = i * dim;
            double ss = 0;
            double dot = 0;
            for (int j = 0; j < dim; j++) {
                ss += (double) x[o + j] * x[o + j];
                dot += (double) dy[o + j] * w[j] * x[o + j];
            }
            double r = 1.0 / Math.sqrt(ss / dim + config.normEps());
            double c = r * r * r * dot / dim;
            for (int j = 0; j < dim; j++) {
                dx[o + j] += (float) (r * w[j] * dy[o + j] - c * x[o + j]);
            }
        }
    }

    /** {@code W·x + scale·B·(A·x)} of one projection, {@code [n][out]}; keeps {@code A·x}. */
    private float[] project(LoraAdapter a, int layer, Projection p, Layer ly, float[] x, int n, int out, Saved s) {
        float[] y = new float[n * out];
        backend.matmul(ly.w.get(p), x, y, n);
        LoraPair pair = a.pair(layer, p);
        if (pair != null) {
            int r = pair.rank();
            float sc = a.header().scale(r);
            float[] t = new float[n * r];
            if (dropout != null) {
                float[] m = dropout.mask(layer, p, n, pair.in());
                float[] xd = new float[m.length];
                for (int i = 0; i < m.length; i++) {
                    xd[i] = x[i] * m[i];
                }
                s.drop.put(p, m);
                x = xd;
            }
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < r; j++) {
                    float sum = 0;
                    for (int k = 0; k < pair.in(); k++) {
                        sum += pair.a()[j * pair.in() + k] * x[i * pair.in() + k];
                    }
                    t[i * r + j] = sum;
                }
                for (int o = 0; o < out; o++) {
                    float sum = 0;
                    for (int j = 0; j < r; j++) {
                        sum += pair.b()[o * r + j] * t[i * r + j];
                    }
                    y[i * out + o] += sc * sum;
                }
            }
            s.t.put(p, t);
        }
        return y;
    }

    /** {@code dx += Wᵀ·dy + scale·Aᵀ·Bᵀ·dy}; {@code dB += scale·dy·tᵀ}, {@code dA += scale·(Bᵀ·dy)·xᵀ}. */
    private void projectBack(LoraAdapter a, int layer, Projection p, Layer ly, float[] x, float[] dy, float[] dx, int n,
                             Saved s, Gradients grads) {
        backend.matmulTransposedAdd(ly.w.get(p), dy, dx, n);
        LoraPair pair = a.pair(layer, p);
        if (pair == null) {
            return;
        }
        int r = pair.rank();
        int in = pair.in();
        int out = pair.out();
        float sc = a.header().scale(r);
        float[] t = s.t.get(p);
        float[] m = s.drop.get(p);
        float[] ga = grads.a(pair);
        float[] gb = grads.b(pair);
        float[] dt = new float[r];
        for (int i = 0; i < n; i++) {
            java.util.Arrays.fill(dt, 0f);
            for (int o = 0; o < out; o++) {
                float g = dy[i * out + o] * sc;
                if (g == 0f) {
                    continue;
                }
                for (int j = 0; j < r; j++) {
                    gb[o * r + j] += g * t[i * r + j];
                    dt[j] += pair.b()[o * r + j] * g;
                }
            }
            if (m == null) {
                for (int j = 0; j < r; j++) {
                    float d = dt[j];
                    for (int k = 0; k < in; k++) {
                        ga[j * in + k] += d * x[i * in + k];
                        dx[i * in + k] += pair.a()[j * in + k] * d;
                    }
                }
            } else { // the factors saw the dropped-out input m·x
                for (int j = 0; j < r; j++) {
                    float d = dt[j];
                    for (int k = 0; k < in; k++) {
                        float mk = m[i * in + k];
                        ga[j * in + k] += d * (x[i * in + k] * mk);
                        dx[i * in + k] += pair.a()[j * in + k] * d * mk;
                    }
                }
            }
        }
    }

    /** Causal grouped-query attention over the sequence; keeps the probabilities {@code [heads][T][T]}. */
    private float[] attention(float[] q, float[] k, float[] v, float[] probs, int n) {
        int hd = att.headDim();
        int qd = att.qDim();
        int kvd = att.kvDim();
        int group = att.heads() / att.kvHeads();
        float[] out = new float[n * qd];
        for (int h = 0; h < att.heads(); h++) {
            int kh = h / group;
            for (int t = 0; t < n; t++) {
                int po = (h * n + t) * n;
                double max = Double.NEGATIVE_INFINITY;
                for (int u = 0; u <= t; u++) {
                    float sc = 0;
                    for (int d = 0; d < hd; d++) {
                        sc += q[t * qd + h * hd + d] * k[u * kvd + kh * hd + d];
                    }
                    probs[po + u] = sc * att.scale();
                    max = Math.max(max, probs[po + u]);
                }
                double sum = 0;
                for (int u = 0; u <= t; u++) {
                    double e = Math.exp(probs[po + u] - max);
                    probs[po + u] = (float) e;
                    sum += e;
                }
                for (int u = 0; u <= t; u++) {
                    probs[po + u] = (float) (probs[po + u] / sum);
                    float p = probs[po + u];
                    for (int d = 0; d < hd; d++) {
                        out[t * qd + h * hd + d] += p * v[u * kvd + kh * hd + d];
                    }
                }
            }
        }
        return out;
    }

    private void attentionBack(Saved s, float[] dout, float[] dq, float[] dk, float[] dv, int n) {
        int hd = att.headDim();
        int qd = att.qDim();
        int kvd = att.kvDim();
        int group = att.heads() / att.kvHeads();
        float[] dp = new float[n];
        for (int h = 0; h < att.heads(); h++) {
            int kh = h / group;
            for (int t = 0; t < n; t++) {
                int po = (h * n + t) * n;
                double dot = 0;
                for (int u = 0; u <= t; u++) {
                    float sum = 0;
                    for (int d = 0; d < hd; d++) {
                        sum += dout[t * qd + h * hd + d] * s.v[u * kvd + kh * hd + d];
                    }
                    dp[u] = sum;
                    dot += (double) s.probs[po + u] * sum;
                    float p = s.probs[po + u];
                    for (int d = 0; d < hd; d++) {
                        dv[u * kvd + kh * hd + d] += p * dout[t * qd + h * hd + d];
                    }
                }
                for (int u = 0; u <= t; u++) {
                    float ds = (float) (s.probs[po + u] * (dp[u] - dot)) * att.scale();
                    for (int d = 0; d < hd; d++) {
                        dq[t * qd + h * hd + d] += ds * s.k[u * kvd + kh * hd + d];
                        dk[u * kvd + kh * hd + d] += ds * s.q[t * qd + h * hd + d];
                    }
                }
            }
        }
    }

    /** A fresh adapter to train: A uniform in ±1/√in (seeded), B zero, so it starts as the base model. */
    public static LoraAdapter init(BaseFingerprint base, List<Projection> targets, int rank, float alpha, boolean rsLora,
                                   long seed, Map<String, String> settings) {
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(seed);
        List<LoraPair> pairs = new ArrayList<>();
        for (int l = 0; l < base.shapes().layers(); l++) {
            for (Projection t : targets) {
                int[] d = LoraPair.dims(t, base.shapes());
                float[] a = new float[rank * d[0]];
                double bound = 1.0 / Math.sqrt(d[0]);
                for (int i = 0; i < a.length; i++) {
                    a[i] = (float) rnd.nextDouble(-bound, bound);
                }
                pairs.add(new LoraPair(l, t, rank, d[0], d[1], a, new float[d[1] * rank]));
            }
        }
        return new LoraAdapter(new LoraAdapter.Header(LoraAdapter.FORMAT_VERSION, base, java.util.EnumSet.copyOf(targets), rank,
                alpha, rsLora, settings), pairs);
    }
}
