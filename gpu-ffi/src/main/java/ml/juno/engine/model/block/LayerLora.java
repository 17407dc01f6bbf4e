package ml.juno.engine.model.block;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.LowRank;

/**
 * The LoRA deltas of one decoder layer (or of this shard's slice of it): per {@link Projection}, the terms
 * {@code y += scale·B·(A·x)} added right after that projection's matrix product (before any bias, as llama.cpp
 * does). A term of adapter 0 applies to every row (adapters played for the whole model, summed); a term of adapter
 * {@code n > 0} only to the rows whose {@link ForwardState#adapter} is {@code n} (named adapters chosen per request).
 * Immutable; the scratch lives in the {@link ForwardState}.
 */
public final class LayerLora {
    private final Term[][] terms;
    private final int maxRank;

    /** One adapter's delta on one projection. */
    public record Term(Projection target, LowRank delta, float scale, int adapter) {
        public Term {
            Objects.requireNonNull(target, "target");
            Objects.requireNonNull(delta, "delta");
            if (!Float.isFinite(scale) || adapter < 0) {
                throw new IllegalArgumentException(delta.name() + ": bad LoRA scale " + scale + " or adapter " + adapter);
            }
        }
    }

    public LayerLora(List<Term> all) {
        List<List<Term>> by = new ArrayList<>();
        for (int i = 0; i < Projection.values().length; i++) {
            by.add(new ArrayList<>());
        }
        int rank = 0;
        for (Term t : all) {
            by.get(t.target().ordinal()).add(t);
            rank = Math.max(rank, t.delta().rank());
        }
        this.terms = new Term[by.size()][];
        for (int i = 0; i < terms.length; i++) {
            terms[i] = by.get(i).toArray(Term[]::new);
        }
        this.maxRank = rank;
    }

    public boolean has(Projection p) {
        return terms[p.ordinal()].length > 0;
    }

    /** The terms on {@code p}, in the order they are added. */
    public List<Term> terms(Projection p) {
        return Arrays.asList(terms[p.ordinal()].clone());
    }

    public int maxRank() {
        return maxRank;
    }

    /** Refuses terms whose shapes do not fit a projection of {@code in} inputs and {@code out} outputs. */
    void check(Projection p, int in, int out, String where) {
        for (Term t : terms[p.ordinal()]) {
            if (t.delta().in() != in || t.delta().out() != out) {
                throw new IllegalArgumentException(where + ": LoRA " + t.delta().name() + " is " + t.delta().in() + "→"
                        + t.delta().out() + ", the projection " + p.shortName + " is " + in + "→" + out);
            }
        }
    }

    /** {@code out += Σ scale·B·(A·x)} over the terms on {@code p} for the first {@code batch} rows. */
    void apply(Backend backend, Projection p, float[] x, float[] out, int batch, ForwardState s) {
        Term[] ts = terms[p.ordinal()];
        if (ts.length == 0) {
            return;
        }
        if (s.loraTmp.length < batch * maxRank) {
            s.loraTmp = new float[s.capacity * maxRank]; // once per session
        }
        float[] scales = s.loraScale;
        for (Term t : ts) {
            boolean any = false;
            for (int b = 0; b < batch; b++) {
                float f = t.adapter() == 0 || s.adapter[b] == t.adapter() ? t.scale() : 0f;
                scales[b] = f;
                any |= f != 0f;
            }
            if (any) {
                backend.addLowRank(t.delta(), x, out, batch, scales, s.loraTmp);
            }
        }
    }

    /** Applies {@code lora} when there is one ({@code null}: no adapter on this layer). */
    static void apply(LayerLora lora, Backend backend, Projection p, float[] x, float[] out, int batch, ForwardState s) {
        if (lora != null) {
            lora.apply(backend, p, x, out, batch, s);
        }
    }
}
