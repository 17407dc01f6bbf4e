package ml.juno.engine.model.block;

import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kv.KvCache;

/**
 * One pre-norm decoder layer: {@code x += post1(attn(norm1(x))); x += post2(ffn(norm2(x)))}. The post-norms (gemma)
 * are optional ({@code null}: none). In a tensor-parallel shard the attention and FFN outputs are partial sums,
 * combined by the {@link AllReduce} before the post-norm and the residual add.
 */
public record DecoderLayer(RmsNorm attnNorm, Attention attention, RmsNorm postAttnNorm, RmsNorm ffnNorm, FeedForward ffn,
                           RmsNorm postFfnNorm) {

    public DecoderLayer {
        if (attnNorm == null || attention == null || ffnNorm == null || ffn == null) {
            throw new IllegalArgumentException("a decoder layer needs its norms, attention and FFN");
        }
    }

    /** A layer without post-norms. */
    public static DecoderLayer preNorm(RmsNorm attnNorm, Attention attention, RmsNorm ffnNorm, FeedForward ffn) {
        return new DecoderLayer(attnNorm, attention, null, ffnNorm, ffn, null);
    }

    public long weightBytes() {
        return attention.weightBytes() + ffn.weightBytes();
    }

    /** The matrices every step of this layer multiplies by ({@link FeedForward#streamedMatrices}), to {@code to}. */
    public void streamedMatrices(java.util.function.Consumer<ml.juno.engine.kernel.WeightMatrix> to) {
        Attention.AttentionWeights w = attention.weights();
        to.accept(w.q());
        to.accept(w.k());
        to.accept(w.v());
        to.accept(w.o());
        ffn.streamedMatrices(to);
    }

    /** Runs the layer over the first {@code batch} rows of {@code s.x}; K/V go to layer {@code cacheLayer}. */
    public void forward(Backend backend, ForwardState s, int batch, KvCache cache, int cacheLayer, AllReduce allReduce) {
        forward(backend, s, batch, cache, cacheLayer, allReduce, null);
    }

    /** Refuses LoRA deltas that do not fit this layer (shapes, or FFN targets on a mixture of experts). */
    public void checkLora(LayerLora lora, String where) {
        attention.checkLora(lora, where);
        ffn.checkLora(lora, where);
    }

    /** {@link #forward(Backend, ForwardState, int, KvCache, int, AllReduce)} with this layer's LoRA deltas ({@code null}: none). */
    public void forward(Backend backend, ForwardState s, int batch, KvCache cache, int cacheLayer, AllReduce allReduce,
                        LayerLora lora) {
        int dim = attnNorm.width();
        attnNorm.apply(backend, s.x, s.xb, batch);
        attention.forward(backend, s, batch, cache, cacheLayer, lora);
        allReduce.sum(s.proj, batch, dim);
        if (postAttnNorm != null) {
            postAttnNorm.apply(backend, s.proj, s.proj, batch);
        }
        backend.add(s.x, s.proj, batch * dim);
        ffnNorm.apply(backend, s.x, s.xb, batch);
        ffn.forward(backend, s, batch, lora);
        allReduce.sum(s.proj, batch, dim);
        if (postFfnNorm != null) {
            postFfnNorm.apply(backend, s.proj, s.proj, batch);
        }
        backend.add(s.x, s.proj, batch * dim);
    }
}
