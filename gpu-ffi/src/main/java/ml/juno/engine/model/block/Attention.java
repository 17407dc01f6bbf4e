package ml.juno.engine.model.block;

import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvCache;

/**
 * Grouped-query self-attention of one layer: project to Q/K/V, rotate Q and K, store K/V in the cache, attend
 * causally, project back. In a tensor-parallel shard the matrices hold this shard's heads only and the output
 * projection yields a partial sum.
 */
public final class Attention {
    private final WeightMatrix wq;
    private final WeightMatrix wk;
    private final WeightMatrix wv;
    private final WeightMatrix wo;
    private final AttentionShape shape;
    private final RopeShape qRope;
    private final RopeShape kRope;

    public Attention(AttentionWeights weights, AttentionShape shape, Rope rope) {
        this.wq = weights.q();
        this.wk = weights.k();
        this.wv = weights.v();
        this.wo = weights.o();
        this.shape = shape;
        this.qRope = new RopeShape(shape.heads(), shape.headDim(), rope.dims(), rope.neox());
        this.kRope = new RopeShape(shape.kvHeads(), shape.headDim(), rope.dims(), rope.neox());
    }

    /** The four projections of one layer: Q/K/V {@code [embedding → heads·headDim]}, O {@code [heads·headDim → embedding]}. */
    public record AttentionWeights(WeightMatrix q, WeightMatrix k, WeightMatrix v, WeightMatrix o) {}

    public long weightBytes() {
        return wq.byteSize() + wk.byteSize() + wv.byteSize() + wo.byteSize();
    }

    /**
     * Attention over {@code s.xb} for the first {@code batch} rows into {@code s.proj}; K/V go to layer
     * {@code cacheLayer} of {@code cache}.
     */
    public void forward(Backend backend, ForwardState s, int batch, KvCache cache, int cacheLayer) {
        backend.matmul(wq, s.xb, s.q, batch);
        backend.matmul(wk, s.xb, s.k, batch);
        backend.matmul(wv, s.xb, s.v, batch);
        backend.rope(s.q, qRope, batch, s.cos, s.sin);
        backend.rope(s.k, kRope, batch, s.cos, s.sin);
        int kvDim = shape.kvDim();
        for (int b = 0; b < batch; b++) {
            cache.store(cacheLayer, s.rows.slot(b), s.rows.position(b), s.k, b * kvDim, s.v, b * kvDim);
        }
        backend.attention(cache, cacheLayer, shape, s.rows, s.q, s.att);
        backend.matmul(wo, s.att, s.proj, batch);
    }
}
