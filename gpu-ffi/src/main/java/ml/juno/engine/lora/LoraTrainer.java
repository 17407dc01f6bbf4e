package ml.juno.engine.lora;

import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvCache;
import ml.juno.engine.kv.KvLayout;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.DecoderModel;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.model.TransformerDecoder;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.model.block.Attention;
import ml.juno.engine.model.block.DecoderLayer;
import ml.juno.engine.model.block.GatedFfn;
import ml.juno.engine.model.block.MoeFfn;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.model.block.RmsNorm;
import ml.juno.engine.model.block.Rope;

/**
 * The forward and backward pass of a decoder over one sequence with LoRA factors as the only trainable parameters.
 * The model is the one the inference engine runs: the architecture's own {@link TransformerDecoder} (so llama,
 * qwen2, qwen3, qwen3moe, phi3 and gemma3 differ here exactly as they do there), and this class follows its blocks:
 * embedding (scaled: gemma3), per layer a pre-norm, Q/K/V (row slices of a fused {@code attn_qkv}: phi3) plus their
 * LoRA terms and biases (qwen2), per-head Q/K RMSNorm (qwen3, gemma3), the layer's RoPE (gemma3: its local or global
 * one), causal attention (within the layer's sliding window: gemma3), O, an optional post-norm (gemma3), the residual;
 * then the FFN half the same way — a gated FFN (SiLU, or GELU: gemma3; gate and up row slices of a fused
 * {@code ffn_up}: phi3), or a mixture of experts ({@link TrainMoe}, qwen3moe: no LoRA on its gate/up/down) — and
 * the final norm, output product and optional logit soft cap. Products with the base go through the {@link Backend}
 * ({@link Backend#matmul} forward, {@link Backend#matmulTransposedAdd} backward; the base stays in its memory-mapped,
 * possibly quantized blocks), activations of every layer are kept for the backward pass. The loss is the mean
 * cross-entropy of the next token over the positions the mask selects.
 *
 * <p>The forward pass uses the engine's own kernels (RMSNorm, RoPE, SwiGLU, GELU), so its logits are the engine's
 * ({@code LoraTrainerParityTest}); attention is computed here, in double where the engine uses ggml's exp. Gradients
 * of the quantized base's activation rounding, and of the F16 GELU table the engine evaluates GELU with, are taken as
 * those of the smooth functions (straight-through); on F32 weights with {@link #smoothGelu} they are exact, which
 * {@code LoraGradientTest} checks against finite differences for every architecture.
 */
public final class LoraTrainer {
    private final Backend backend;
    private final ModelConfig config;
    private final WeightMatrix embeddings;
    private final float embedScale;
    private final WeightMatrix output;
    private final Norm outputNorm;
    private final float softcap;
    private final Layer[] layers;
    private final int dim;
    private final int vocab;
    private boolean smoothGelu;

    /** An RMSNorm's weight and epsilon. */
    private record Norm(float[] w, float eps) {
        static Norm of(RmsNorm n) {
            return n == null ? null : new Norm(n.weight(), n.eps());
        }
    }

    /** One decoder layer as the trainer reads it; the {@code null} norms and {@code moe} are absent. */
    private static final class Layer {
        final Norm attnNorm;
        final Norm postAttnNorm;
        final Norm ffnNorm;
        final Norm postFfnNorm;
        final Norm qNorm;
        final Norm kNorm;
        final AttentionShape att;
        final Attention.Biases biases;
        final int window;
        final Rope rope;
        final RopeShape qRope;
        final RopeShape kRope;
        final Map<Projection, WeightMatrix> w = new EnumMap<>(Projection.class); // the dense FFN's too
        final GatedFfn.Activation activation; // the dense FFN's
        final MoeFfn moe;

        Layer(DecoderLayer d, int index) {
            attnNorm = Norm.of(d.attnNorm());
            postAttnNorm = Norm.of(d.postAttnNorm());
            ffnNorm = Norm.of(d.ffnNorm());
            postFfnNorm = Norm.of(d.postFfnNorm());
            Attention a = d.attention();
            att = a.shape();
            biases = a.options().biases();
            qNorm = Norm.of(a.options().qNorm());
            kNorm = Norm.of(a.options().kNorm());
            window = a.options().window();
            rope = a.rope();
            qRope = new RopeShape(att.heads(), att.headDim(), rope.dims(), rope.neox());
            kRope = new RopeShape(att.kvHeads(), att.headDim(), rope.dims(), rope.neox());
            var aw = a.weights();
            w.put(Projection.Q, aw.q());
            w.put(Projection.K, aw.k());
            w.put(Projection.V, aw.v());
            w.put(Projection.O, aw.o());
            if (d.ffn() instanceof GatedFfn f) {
                w.put(Projection.GATE, f.gate());
                w.put(Projection.UP, f.up());
                w.put(Projection.DOWN, f.down());
                activation = f.activation();
                moe = null;
            } else if (d.ffn() instanceof MoeFfn m) {
                activation = null;
                moe = m;
            } else {
                throw new IllegalArgumentException("LoRA training: layer " + index + "'s FFN (" + d.ffn().getClass().getSimpleName()
                        + ") has no backward pass");
            }
        }
    }

    private Dropout dropout; // of the run in progress

    /**
     * The trainer of {@code file}'s model as the engine loads it by default (sequences of up to the engine's default
     * context, which decides phi3's LongRoPE factors).
     */
    public LoraTrainer(GgufFile file, ModelConfig config, Backend backend) {
        this(file, config, backend, Math.min(config.dims().contextLength(), EngineOptions.DEFAULT_MAX_CONTEXT));
    }

    /** The trainer of {@code file}'s model as the engine loads it for sequences of up to {@code contextLength}. */
    public LoraTrainer(GgufFile file, ModelConfig config, Backend backend, int contextLength) {
        this.backend = backend;
        this.config = config;
        this.dim = config.dims().embedding();
        this.vocab = config.dims().vocab();
        int layersN = config.dims().layers();
        DecoderModel model = Architectures.forName(config.architecture()).load(file, config, ShardSpec.whole(layersN),
                AllReduce.NONE, contextLength);
        if (!(model instanceof TransformerDecoder decoder)) {
            throw new IllegalArgumentException("LoRA training of " + config.architecture() + " is not supported: its decoder ("
                    + model.getClass().getSimpleName() + ") has no backward pass");
        }
        this.embeddings = decoder.input().embeddings();
        this.embedScale = decoder.input().scale();
        TransformerDecoder.Head head = decoder.head();
        this.output = head.output();
        this.outputNorm = Norm.of(head.norm());
        this.softcap = head.softcap();
        DecoderLayer[] ls = decoder.layers();
        this.layers = new Layer[ls.length];
        for (int l = 0; l < ls.length; l++) {
            layers[l] = new Layer(ls[l], l);
        }
    }

    public ModelConfig config() {
        return config;
    }

    /**
     * Refuses {@code targets} this model cannot train, naming the reason: gate, up and down on a mixture-of-experts
     * FFN (qwen3moe), which has one gate/up/down per expert where an adapter (and the engine playing it) has one per
     * layer.
     */
    public void requireTrainable(Collection<Projection> targets) {
        for (int l = 0; l < layers.length; l++) {
            if (layers[l].moe == null) {
                continue;
            }
            for (Projection t : targets) {
                if (t.ffn()) {
                    throw new IllegalArgumentException("LoRA training of the FFN target '" + t.shortName + "' is not supported on "
                            + config.architecture() + ": layer " + l + "'s FFN is a mixture of " + layers[l].moe.experts().length
                            + " experts (" + layers[l].moe.used() + " routed per token), each with its own gate/up/down, while an"
                            + " adapter has one per layer; train the attention targets q, k, v, o");
                }
            }
        }
    }

    /**
     * GELU evaluated as the smooth tanh approximation instead of the engine's F16 table (a step function at F16
     * resolution, which finite differences cannot see through): for the gradient check only.
     */
    void smoothGelu(boolean on) {
        this.smoothGelu = on;
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
        float[] xIn, h, qPre, kPre, q, k, v, probs, o, projPre, xMid, h2, g, u, act, ffnPre;
        TrainMoe moe;
        final Map<Projection, float[]> t = new EnumMap<>(Projection.class); // scale·A·x per adapted projection, [T][rank]
        final Map<Projection, float[]> drop = new EnumMap<>(Projection.class); // dropout multipliers, [T][in]
    }

    /** A forward pass: each layer's activations, the last hidden state and the logits {@code [T][vocab]} (soft-capped). */
    private record Pass(Saved[] saved, float[] xFinal, float[] logits, Map<Rope, float[][]> angles) {}

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
     * The logits {@code [T][vocab]} of every position of {@code tokens} with {@code adapter} applied ({@code null}:
     * the base), as the engine computes them.
     */
    public float[] logits(LoraAdapter adapter, int[] tokens) {
        this.dropout = null;
        if (tokens.length < 1) {
            throw new IllegalArgumentException("no tokens");
        }
        return forward(adapter, tokens).logits;
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
        Pass pass = forward(adapter, tokens);
        float[] logits = pass.logits;
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
        if (gradScale != 1f) {
            for (int i = 0; i < dlogits.length; i++) {
                dlogits[i] *= gradScale;
            }
        }
        backward(adapter, pass, dlogits, n, grads);
        backwardNanos = System.nanoTime() - forwardEnd;
        return loss;
    }

    /** Refuses an adapter whose pairs do not fit this model's layers and projections. */
    private void check(LoraAdapter adapter) {
        if (adapter == null) {
            return;
        }
        for (LoraPair p : adapter.pairs()) {
            if (p.layer() >= layers.length) {
                throw new IllegalArgumentException("LoRA " + LoraPair.name(p.layer(), p.target()) + ": the model has " + layers.length + " layers");
            }
            if (p.target().ffn() && layers[p.layer()].moe != null) {
                requireTrainable(List.of(p.target()));
            }
            WeightMatrix w = layers[p.layer()].w.get(p.target());
            if (w.cols() != p.in() || w.rows() != p.out()) {
                throw new IllegalArgumentException("LoRA " + LoraPair.name(p.layer(), p.target()) + " is " + p.in() + "→" + p.out()
                        + ", the projection is " + w.cols() + "→" + w.rows());
            }
        }
    }

    private Pass forward(LoraAdapter adapter, int[] tokens) {
        check(adapter);
        int n = tokens.length;
        BatchRows rows = new BatchRows(n);
        for (int i = 0; i < n; i++) {
            rows.add(0, i);
        }
        Map<Rope, float[][]> angles = new IdentityHashMap<>(); // {cos, sin} per distinct rope, [T][dims/2]
        for (Layer ly : layers) {
            angles.computeIfAbsent(ly.rope, r -> {
                float[] cos = new float[n * r.dims() / 2];
                float[] sin = new float[n * r.dims() / 2];
                r.angles(rows, n, cos, sin);
                return new float[][] {cos, sin};
            });
        }
        float[] x = new float[n * dim];
        for (int i = 0; i < n; i++) {
            backend.embed(embeddings, tokens[i], x, i * dim);
        }
        if (embedScale != 1f) {
            for (int i = 0; i < n * dim; i++) {
                x[i] *= embedScale;
            }
        }
        Saved[] saved = new Saved[layers.length];
        try (KvCache cache = new KvCache(new KvLayout(layers.length, 1, n, layers[0].att.kvDim(), KvType.F32))) {
            layers(adapter, x, rows, angles, cache, saved, n);
        }
        float[] xFinal = x.clone();
        float[] hf = rms(x, outputNorm, n, dim);
        float[] logits = new float[n * vocab];
        backend.matmul(output, hf, logits, n);
        if (softcap > 0f) {
            for (int i = 0; i < logits.length; i++) {
                logits[i] = (float) Math.tanh(logits[i] / softcap) * softcap;
            }
        }
        return new Pass(saved, xFinal, logits, angles);
    }

    /** The decoder layers over {@code x} ({@code [T][dim]}, updated), each one's activations into {@code saved}. */
    private void layers(LoraAdapter adapter, float[] x, BatchRows rows, Map<Rope, float[][]> angles, KvCache cache, Saved[] saved, int n) {
        for (int l = 0; l < layers.length; l++) {
            Layer ly = layers[l];
            Saved s = saved[l] = new Saved();
            AttentionShape att = ly.att;
            int qd = att.qDim();
            int kvd = att.kvDim();
            s.xIn = x.clone();
            s.h = rms(x, ly.attnNorm, n, dim);
            float[] q = new float[n * qd];
            float[] k = new float[n * kvd];
            float[] v = new float[n * kvd];
            backend.matmul(ly.w.get(Projection.Q), q, ly.w.get(Projection.K), k, ly.w.get(Projection.V), v, s.h, n);
            lora(adapter, l, Projection.Q, s.h, q, n, s);
            lora(adapter, l, Projection.K, s.h, k, n, s);
            lora(adapter, l, Projection.V, s.h, v, n, s);
            Attention.Biases b = ly.biases;
            if (b.q() != null) {
                backend.addBias(q, b.q(), n, qd);
            }
            if (b.k() != null) {
                backend.addBias(k, b.k(), n, kvd);
            }
            if (b.v() != null) {
                backend.addBias(v, b.v(), n, kvd);
            }
            if (ly.qNorm != null) {
                s.qPre = q;
                q = rms(q, ly.qNorm, n * att.heads(), att.headDim());
            }
            if (ly.kNorm != null) {
                s.kPre = k;
                k = rms(k, ly.kNorm, n * att.kvHeads(), att.headDim());
            }
            float[][] cs = angles.get(ly.rope);
            backend.rope(q, ly.qRope, n, cs[0], cs[1]);
            backend.rope(k, ly.kRope, n, cs[0], cs[1]);
            s.q = q;
            s.k = k;
            s.v = v;
            for (int r = 0; r < n; r++) {
                cache.store(l, 0, r, k, r * kvd, v, r * kvd);
            }
            s.o = new float[n * qd];
            backend.attention(cache, l, att, rows, q, s.o, ly.window);
            s.probs = new float[att.heads() * n * n];
            TrainMath.probabilities(att, ly.window, q, k, s.probs, n);
            float[] proj = new float[n * dim];
            backend.matmul(ly.w.get(Projection.O), s.o, proj, n);
            lora(adapter, l, Projection.O, s.o, proj, n, s);
            if (b.o() != null) {
                backend.addBias(proj, b.o(), n, dim);
            }
            if (ly.postAttnNorm != null) {
                s.projPre = proj;
                proj = rms(proj, ly.postAttnNorm, n, dim);
            }
            backend.add(x, proj, n * dim);
            s.xMid = x.clone();
            s.h2 = rms(x, ly.ffnNorm, n, dim);
            float[] down;
            if (ly.moe != null) {
                s.moe = new TrainMoe(ly.moe);
                down = s.moe.forward(backend, s.h2, n);
            } else {
                WeightMatrix gate = ly.w.get(Projection.GATE);
                int ffn = gate.rows();
                s.g = new float[n * ffn];
                s.u = new float[n * ffn];
                backend.matmul(gate, s.g, ly.w.get(Projection.UP), s.u, null, null, s.h2, n);
                lora(adapter, l, Projection.GATE, s.h2, s.g, n, s);
                lora(adapter, l, Projection.UP, s.h2, s.u, n, s);
                s.act = s.g.clone();
                if (ly.activation == GatedFfn.Activation.SILU) {
                    backend.swiglu(s.act, s.u, n, ffn);
                } else if (smoothGelu) {
                    TrainMath.smoothGeglu(s.act, s.u, n * ffn);
                } else {
                    backend.geglu(s.act, s.u, n, ffn);
                }
                down = new float[n * dim];
                backend.matmul(ly.w.get(Projection.DOWN), s.act, down, n);
                lora(adapter, l, Projection.DOWN, s.act, down, n, s);
            }
            if (ly.postFfnNorm != null) {
                s.ffnPre = down;
                down = rms(down, ly.postFfnNorm, n, dim);
            }
            backend.add(x, down, n * dim);
        }
    }

    private void backward(LoraAdapter adapter, Pass pass, float[] dlogits, int n, Gradients grads) {
        if (softcap > 0f) { // logits = c·tanh(z/c): dz = (1 − (logits/c)²)·dlogits
            float[] capped = pass.logits;
            for (int i = 0; i < dlogits.length; i++) {
                float t = capped[i] / softcap;
                dlogits[i] *= 1f - t * t;
            }
        }
        float[] dhf = new float[n * dim];
        backend.matmulTransposedAdd(output, dlogits, dhf, n);
        float[] dx = new float[n * dim];
        rmsBack(pass.xFinal, outputNorm, dhf, dx, n, dim);
        Map<Rope, float[]> negSin = new IdentityHashMap<>(); // the transpose of a rotation is the inverse rotation
        for (int l = layers.length - 1; l >= 0; l--) {
            Layer ly = layers[l];
            Saved s = pass.saved[l];
            AttentionShape att = ly.att;
            int qd = att.qDim();
            int kvd = att.kvDim();
            // FFN half: x += post(ffn(norm(x)))
            float[] dDown = dx;
            if (ly.postFfnNorm != null) {
                dDown = new float[n * dim];
                rmsBack(s.ffnPre, ly.postFfnNorm, dx, dDown, n, dim);
            }
            float[] dh2 = new float[n * dim];
            if (ly.moe != null) {
                s.moe.backward(backend, dDown, dh2);
            } else {
                int ffn = ly.w.get(Projection.GATE).rows();
                float[] dact = new float[n * ffn];
                projectBack(adapter, l, Projection.DOWN, ly, s.act, dDown, dact, n, s, grads);
                float[] dg = new float[n * ffn];
                float[] du = new float[n * ffn];
                TrainMath.gatedBack(ly.activation == GatedFfn.Activation.GELU, s.g, s.u, dact, dg, du, n * ffn);
                projectBack(adapter, l, Projection.GATE, ly, s.h2, dg, dh2, n, s, grads);
                projectBack(adapter, l, Projection.UP, ly, s.h2, du, dh2, n, s, grads);
            }
            rmsBack(s.xMid, ly.ffnNorm, dh2, dx, n, dim);
            // attention half: x += post(o-proj(attention(rope(norm(q)), rope(norm(k)), v)))
            float[] dProj = dx;
            if (ly.postAttnNorm != null) {
                dProj = new float[n * dim];
                rmsBack(s.projPre, ly.postAttnNorm, dx, dProj, n, dim);
            }
            float[] dout = new float[n * qd];
            projectBack(adapter, l, Projection.O, ly, s.o, dProj, dout, n, s, grads);
            float[] dq = new float[n * qd];
            float[] dk = new float[n * kvd];
            float[] dv = new float[n * kvd];
            TrainMath.attentionBack(att, ly.window, s.q, s.k, s.v, s.probs, dout, dq, dk, dv, n);
            float[][] cs = pass.angles.get(ly.rope);
            float[] ns = negSin.computeIfAbsent(ly.rope, r -> {
                float[] m = cs[1].clone();
                for (int i = 0; i < m.length; i++) {
                    m[i] = -m[i];
                }
                return m;
            });
            backend.rope(dq, ly.qRope, n, cs[0], ns);
            backend.rope(dk, ly.kRope, n, cs[0], ns);
            if (ly.qNorm != null) {
                float[] d = new float[n * qd];
                rmsBack(s.qPre, ly.qNorm, dq, d, n * att.heads(), att.headDim());
                dq = d;
            }
            if (ly.kNorm != null) {
                float[] d = new float[n * kvd];
                rmsBack(s.kPre, ly.kNorm, dk, d, n * att.kvHeads(), att.headDim());
                dk = d;
            }
            float[] dh = new float[n * dim];
            projectBack(adapter, l, Projection.Q, ly, s.h, dq, dh, n, s, grads);
            projectBack(adapter, l, Projection.K, ly, s.h, dk, dh, n, s, grads);
            projectBack(adapter, l, Projection.V, ly, s.h, dv, dh, n, s, grads);
            rmsBack(s.xIn, ly.attnNorm, dh, dx, n, dim);
        }
    }

    /** {@code rows} rows of {@code width} of {@code x}, RMS-normalized with {@code norm}. */
    private float[] rms(float[] x, Norm norm, int rows, int width) {
        float[] out = new float[rows * width];
        backend.rmsNorm(x, norm.w, norm.eps, out, rows, width);
        return out;
    }

    private static void rmsBack(float[] x, Norm norm, float[] dy, float[] dx, int rows, int width) {
        TrainMath.rmsBack(x, norm.w, norm.eps, dy, dx, rows, width);
    }

    /** {@code y += scale·B·(A·x)} of {@code layer}'s {@code p} when the adapter has it ({@code [n][out]}); keeps {@code scale·A·x}. */
    private void lora(LoraAdapter a, int layer, Projection p, float[] x, float[] y, int n, Saved s) {
        LoraPair pair = a == null ? null : a.pair(layer, p);
        if (pair == null) {
            return;
        }
        int r = pair.rank();
        float[] scales = new float[n];
        java.util.Arrays.fill(scales, a.header().scale(r));
        if (dropout != null) {
            float[] m = dropout.mask(layer, p, n, pair.in());
            float[] xd = new float[m.length];
            for (int i = 0; i < m.length; i++) {
                xd[i] = x[i] * m[i];
            }
            s.drop.put(p, m);
            x = xd;
        }
        float[] t = new float[n * r];
        backend.addLowRank(pair.lowRank(), x, y, n, scales, t); // as the engine plays it; leaves scale·A·x in t
        s.t.put(p, t);
    }

    /** {@code dx += Wᵀ·dy + scale·Aᵀ·Bᵀ·dy}; {@code dB += dy·(scale·t)ᵀ}, {@code dA += scale·(Bᵀ·dy)·xᵀ} ({@code t = A·x}, kept scaled). */
    private void projectBack(LoraAdapter a, int layer, Projection p, Layer ly, float[] x, float[] dy, float[] dx, int n,
                             Saved s, Gradients grads) {
        backend.matmulTransposedAdd(ly.w.get(p), dy, dx, n);
        LoraPair pair = a == null ? null : a.pair(layer, p);
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
                    gb[o * r + j] += dy[i * out + o] * t[i * r + j]; // t is scale·A·x
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
