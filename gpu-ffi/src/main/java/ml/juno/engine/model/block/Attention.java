package ml.juno.engine.model.block;

import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvCache;

/**
 * Grouped-query self-attention of one layer: project to Q/K/V (plus biases), normalize each Q and K head (qwen3,
 * gemma3), rotate Q and K, store K/V in the cache, attend causally (optionally within a sliding window), project back
 * (plus the output bias). In a tensor-parallel shard the matrices hold this shard's heads only and the output
 * projection yields a partial sum; only the rank that owns the output bias adds it.
 */
public final class Attention {
    private final WeightMatrix wq;
    private final WeightMatrix wk;
    private final WeightMatrix wv;
    private final WeightMatrix wo;
    private final AttentionShape shape;
    private final Rope rope;
    private final RopeShape qRope;
    private final RopeShape kRope;
    private final Options options;

    public Attention(AttentionWeights weights, AttentionShape shape, Rope rope) {
        this(weights, shape, rope, Options.PLAIN);
    }

    public Attention(AttentionWeights weights, AttentionShape shape, Rope rope, Options options) {
        this.wq = weights.q();
        this.wk = weights.k();
        this.wv = weights.v();
        this.wo = weights.o();
        this.shape = shape;
        this.rope = rope;
        this.options = options;
        this.qRope = new RopeShape(shape.heads(), shape.headDim(), rope.dims(), rope.neox());
        this.kRope = new RopeShape(shape.kvHeads(), shape.headDim(), rope.dims(), rope.neox());
        checkLength("q bias", options.biases().q(), shape.qDim());
        checkLength("k bias", options.biases().k(), shape.kvDim());
        checkLength("v bias", options.biases().v(), shape.kvDim());
        checkLength("output bias", options.biases().o(), wo.rows());
        if (options.qNorm() != null && options.qNorm().width() != shape.headDim()
                || options.kNorm() != null && options.kNorm().width() != shape.headDim()) {
            throw new IllegalArgumentException("per-head Q/K norms must be " + shape.headDim() + " wide");
        }
    }

    private static void checkLength(String what, float[] v, int n) {
        if (v != null && v.length != n) {
            throw new IllegalArgumentException(what + " has " + v.length + " entries, expected " + n);
        }
    }

    /** The four projections of one layer: Q/K/V {@code [embedding → heads·headDim]}, O {@code [heads·headDim → embedding]}. */
    public record AttentionWeights(WeightMatrix q, WeightMatrix k, WeightMatrix v, WeightMatrix o) {}

    /** Bias vectors added after the projections; {@code null} = none. {@code o} is set on one tensor-parallel rank only. */
    public record Biases(float[] q, float[] k, float[] v, float[] o) {
        public static final Biases NONE = new Biases(null, null, null, null);
    }

    /**
     * What varies between architectures: biases, per-head RMSNorm of Q and K ({@code null} = none), and the sliding
     * window ({@code 0} = full causal attention).
     */
    public record Options(Biases biases, RmsNorm qNorm, RmsNorm kNorm, int window) {
        public static final Options PLAIN = new Options(Biases.NONE, null, null, 0);

        public Options {
            if (biases == null || window < 0) {
                throw new IllegalArgumentException("bad attention options: biases " + biases + ", window " + window);
            }
        }
    }

    public Rope rope() {
        return rope;
    }

    /** The four projections (this shard's slices; row slices of {@code attn_qkv} where the file fuses them). */
    public AttentionWeights weights() {
        return new AttentionWeights(wq, wk, wv, wo);
    }

    /** This shard's heads, KV heads, head size and score scale. */
    public AttentionShape shape() {
        return shape;
    }

    /** Biases, per-head Q/K norms and the sliding window of this layer. */
    public Options options() {
        return options;
    }

    public long weightBytes() {
        return wq.byteSize() + wk.byteSize() + wv.byteSize() + wo.byteSize();
    }

    /**
     * Attention over {@code s.xb} for the first {@code batch} rows into {@code s.proj}; K/V go to layer
     * {@code cacheLayer} of {@code cache}. {@code s.cos}/{@code s.sin} must hold this layer's {@link #rope()} angles.
     */
    public void forward(Backend backend, ForwardState s, int batch, KvCache cache, int cacheLayer) {
        forward(backend, s, batch, cache, cacheLayer, null);
    }

    /** Refuses LoRA terms that do not fit this layer's (this shard's) Q/K/V/O matrices. */
    public void checkLora(LayerLora lora, String where) {
        lora.check(Projection.Q, wq.cols(), wq.rows(), where);
        lora.check(Projection.K, wk.cols(), wk.rows(), where);
        lora.check(Projection.V, wv.cols(), wv.rows(), where);
        lora.check(Projection.O, wo.cols(), wo.rows(), where);
    }

    /** {@link #forward(Backend, ForwardState, int, KvCache, int)} with the LoRA deltas {@code lora} ({@code null}: none). */
    public void forward(Backend backend, ForwardState s, int batch, KvCache cache, int cacheLayer, LayerLora lora) {
        backend.matmul(wq, s.q, wk, s.k, wv, s.v, s.xb, batch);
        if (lora != null) {
            lora.apply(backend, Projection.Q, s.xb, s.q, batch, s);
            lora.apply(backend, Projection.K, s.xb, s.k, batch, s);
            lora.apply(backend, Projection.V, s.xb, s.v, batch, s);
        }
        Biases b = options.biases;
        if (b.q != null) {
            backend.addBias(s.q, b.q, batch, shape.qDim());
        }
        if (b.k != null) {
            backend.addBias(s.k, b.k, batch, shape.kvDim());
        }
        if (b.v != null) {
            backend.addBias(s.v, b.v, batch, shape.kvDim());
        }
        if (options.qNorm != null) {
            options.qNorm.apply(backend, s.q, s.q, batch * shape.heads());
        }
        if (options.kNorm != null) {
            options.kNorm.apply(backend, s.k, s.k, batch * shape.kvHeads());
        }
        backend.rope(s.q, qRope, batch, s.cos, s.sin);
        backend.rope(s.k, kRope, batch, s.cos, s.sin);
        int kvDim = shape.kvDim();
        for (int r = 0; r < batch; r++) {
            cache.store(cacheLayer, s.rows.slot(r), s.rows.position(r), s.k, r * kvDim, s.v, r * kvDim);
        }
        backend.attention(cache, cacheLayer, shape, s.rows, s.q, s.att, options.window);
        backend.matmul(wo, s.att, s.proj, batch);
        LayerLora.apply(lora, backend, Projection.O, s.att, s.proj, batch, s);
        if (b.o != null) {
            backend.addBias(s.proj, b.o, batch, wo.rows());
        }
    }
}
