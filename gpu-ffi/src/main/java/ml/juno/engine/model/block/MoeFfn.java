package ml.juno.engine.model.block;

import java.util.Objects;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.ExpertBatch;
import ml.juno.engine.kernel.WeightMatrix;

/**
 * Mixture of experts (qwen3moe, llama.cpp {@code build_moe_ffn} with softmax gating): the router gives each row a
 * softmax over the experts, the row keeps its {@code used} most probable experts with their probabilities as weights
 * (re-normalized to sum 1 when {@code normalize}), and its output is the weighted sum of those experts' gated FFNs.
 * Rows are grouped by expert so each chosen expert's weights are read once per step; experts nobody chose are not
 * read. The chosen experts run together ({@link Backend#experts}: the native backend spreads them over its threads),
 * those in memory first, the rest as an {@link ExpertSource} delivers them. Each row's result depends only on that row
 * (batch invariance): its experts' weighted outputs are summed in rank order.
 */
public final class MoeFfn implements FeedForward {
    private final WeightMatrix router;
    private final GatedFfn[] experts;
    private final int used;
    private final boolean normalize;
    /** The experts' gate activation is GELU (else SiLU); the same for every expert of the layer. */
    private final boolean gelu;
    /** Where the experts' bytes come from: the memory map unless {@link #streamFrom} installed a store. */
    private ExpertSource source;
    /** {@link #source}'s {@link ExpertSource#awaitBytes}, made once (no allocation per step). */
    private ExpertBatch.Arrivals arrivals;

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
        this.gelu = this.experts[0].activation() == GatedFfn.Activation.GELU;
        for (GatedFfn e : this.experts) {
            if (e.activation() != this.experts[0].activation()) {
                throw new IllegalArgumentException("bad MoE: experts with different activations");
            }
        }
        streamFrom(ExpertSource.mapped(this.experts));
    }

    /** The experts as mapped (this shard's slice): the shapes, types and file positions a store reads. */
    public GatedFfn[] experts() {
        return experts.clone();
    }

    /** The router {@code [embedding → experts]}. */
    public WeightMatrix router() {
        return router;
    }

    @Override
    public void streamedMatrices(java.util.function.Consumer<WeightMatrix> to) {
        to.accept(router);
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
        this.arrivals = s::awaitBytes;
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
        // the union of the batch's experts, once per step; each expert's weighted output lands in its own choices' rows
        // of expertMixed, so the order they run in (as their bytes arrive) changes no value
        ExpertSource src = source;
        ExpertBatch eb = s.experts;
        int[] order = s.expertOrder;
        boolean[] taken = s.expertRan;
        try {
            src.begin(s.expertStart, n);
            src.ahead(s.xb, batch);
            int m = 0;
            for (int e = 0; e < n; e++) {
                if (s.expertStart[e + 1] > s.expertStart[e]) {
                    order[m++] = e;
                    taken[e] = false;
                }
            }
            // every expert whose bytes are in memory now, and after them those being read, together: the backend runs
            // the present ones while the missing ones are read, each missing one on the first thread free once it lands
            eb.clear(gelu);
            for (int i = 0; i < m; i++) {
                GatedFfn f = src.present(order[i]);
                if (f != null) {
                    add(eb, s, order[i], f, null);
                }
            }
            for (int i = 0; i < m; i++) {
                GatedFfn f;
                if (!taken[order[i]] && (f = src.incoming(order[i])) != null) {
                    add(eb, s, order[i], f, arrivals);
                }
            }
            int left = m - run(backend, eb, src);
            // then those that had no memory to be read into: wait for the first, with it whatever else has arrived
            int next = 0;
            while (left > 0) {
                while (taken[order[next]]) {
                    next++;
                }
                eb.clear(gelu);
                GatedFfn f = src.await(order[next]);
                if (f == null) {
                    throw new IllegalStateException("no memory free to read expert " + order[next] + " into");
                }
                add(eb, s, order[next], f, null);
                for (int i = next + 1; i < m; i++) {
                    int e = order[i];
                    if (!taken[e] && (f = src.present(e)) != null) {
                        add(eb, s, e, f, null);
                    }
                }
                left -= run(backend, eb, src);
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

    /** Adds expert {@code e} to {@code eb}: present, or incoming ({@code arrivals} waits for its bytes) when given. */
    private static void add(ExpertBatch eb, ForwardState s, int e, GatedFfn f, ExpertBatch.Arrivals arrivals) {
        int from = s.expertStart[e];
        int rows = s.expertStart[e + 1] - from;
        if (arrivals == null) {
            eb.add(e, f.gate(), f.up(), f.down(), from, rows);
        } else {
            eb.addIncoming(e, f.gate(), f.up(), f.down(), from, rows, arrivals);
        }
        s.expertRan[e] = true;
    }

    /**
     * Runs the batch's experts and hands their bytes back; returns how many ran. An incoming expert is settled with
     * {@link ExpertSource#await} first (its bytes are here: it only checks them, and throws if their read failed).
     */
    private static int run(Backend backend, ExpertBatch eb, ExpertSource src) {
        int c = eb.count();
        if (c > 0) {
            backend.experts(eb);
            for (int k = 0; k < c; k++) {
                if (eb.incoming(k)) {
                    src.await(eb.id(k));
                }
                src.done(eb.id(k));
            }
        }
        return c;
    }
}
