package ml.juno.engine.model.block;

import java.util.Objects;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.WeightMatrix;

/**
 * Mixture of experts (qwen3moe, llama.cpp {@code build_moe_ffn} with softmax gating): the router gives each row a
 * softmax over the experts, the row keeps its {@code used} most probable experts with their probabilities as weights
 * (re-normalized to sum 1 when {@code normalize}), and its output is the weighted sum of those experts' gated FFNs.
 * Rows are grouped by expert so each chosen expert's weights are read once per step; experts nobody chose are not
 * read. Each row's result depends only on that row (batch invariance): its experts are summed in expert order.
 */
public final class MoeFfn implements FeedForward {
    private final WeightMatrix router;
    private final GatedFfn[] experts;
    private final int used;
    private final boolean normalize;
    /** Where the experts' bytes come from: the memory map unless {@link #streamFrom} installed a store. */
    private ExpertSource source;

    /** {@code router}: {@code [embedding → experts]}; {@code experts}: one FFN per expert (this shard's slice). */
    public MoeFfn(WeightMatrix router, GatedFfn[] experts, int used, boolean normalize) {
        if (router.rows() != experts.length || used <= 0 || used > experts.length) {
            throw new IllegalArgumentException("bad MoE: router for " + router.rows() + " experts, " + experts.length
                    + " experts, " + used + " used");
        }
        this.router = router;
        this.experts = experts.clone();
        this.used = used;
        this.normalize = normalize;
        this.source = ExpertSource.mapped(this.experts);
    }

    /** The experts as mapped (this shard's slice): the shapes, types and file positions a store reads. */
    public GatedFfn[] experts() {
        return experts.clone();
    }

    /** The router {@code [embedding → experts]}. */
    public WeightMatrix router() {
        return router;
    }

    /** Whether the chosen experts' weights are re-normalized to sum 1. */
    public boolean normalize() {
        return normalize;
    }

    /** Top-k: experts each row uses. */
    public int used() {
        return used;
    }

    /**
     * From now on the experts' bytes come from {@code s} (an expert store) instead of the memory map; called before
     * any session runs the model. The FFNs {@code s} hands out must be these experts' (same shapes, same bytes).
     */
    public void streamFrom(ExpertSource s) {
        this.source = Objects.requireNonNull(s, "source");
    }

    public ForwardState.Routing routing() {
        return new ForwardState.Routing(experts.length, used);
    }

    /** Widest expert FFN (this shard's slice). */
    public int width() {
        int w = 0;
        for (GatedFfn e : experts) {
            w = Math.max(w, e.width());
        }
        return w;
    }

    @Override
    public long weightBytes() {
        return router.byteSize() + used * experts[0].weightBytes();
    }

    @Override
    public void forward(Backend backend, ForwardState s, int batch) {
        int n = experts.length;
        int dim = router.cols();
        backend.matmul(router, s.xb, s.routerProbs, batch);
        for (int b = 0; b < batch; b++) {
            MoeRouting.route(s.routerProbs, b * n, n, used, normalize, s.chosenExperts, s.expertWeights, b * used);
        }
        MoeRouting.groupByExpert(s.chosenExperts, batch, used, n, s.expertStart, s.expertRows);
        // the union of the batch's experts, once per step; computed in expert order whatever order their bytes arrive in
        ExpertSource src = source;
        try {
            src.begin(s.expertStart, n);
            for (int e = 0; e < n; e++) {
                int from = s.expertStart[e];
                int count = s.expertStart[e + 1] - from;
                if (count == 0) {
                    continue;
                }
                for (int i = 0; i < count; i++) {
                    int row = s.expertRows[from + i] / used;
                    System.arraycopy(s.xb, row * dim, s.expertIn, i * dim, dim);
                }
                src.await(e).forward(backend, s.expertIn, s, count, s.expertOut);
                src.done(e);
                for (int i = 0; i < count; i++) {
                    int choice = s.expertRows[from + i]; // row · used + rank
                    float w = s.expertWeights[choice];
                    int o = choice * dim;
                    int eo = i * dim;
                    for (int j = 0; j < dim; j++) {
                        s.expertMixed[o + j] = w * s.expertOut[eo + j];
                    }
                }
            }
        } finally {
            src.end();
        }
        // as llama.cpp: the weighted outputs added in rank order (best expert first), whatever the expert ids
        for (int b = 0; b < batch; b++) {
            int o = b * dim;
            int m = b * used * dim;
            System.arraycopy(s.expertMixed, m, s.proj, o, dim);
            for (int k = 1; k < used; k++) {
                int mk = m + k * dim;
                for (int j = 0; j < dim; j++) {
                    s.proj[o + j] += s.expertMixed[mk + j];
                }
            }
        }
    }
}
