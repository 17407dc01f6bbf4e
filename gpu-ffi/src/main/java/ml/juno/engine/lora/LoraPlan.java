package ml.juno.engine.lora;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.LowRank;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.model.ShardTensors;
import ml.juno.engine.model.block.LayerLora;
import ml.juno.engine.model.block.Projection;

/**
 * Turns the adapters a shard plays into its per-layer {@link LayerLora}s. Pipeline: only the shard's layers. Tensor
 * parallel, rank {@code r} of {@code P} (as {@link ShardTensors} slices the base): projections whose outputs are
 * sliced (Q, K, V by heads, gate/up by FFN columns) keep all of A and take their rows of B; projections whose inputs
 * are sliced (O, down) take their columns of A and all of B, so each rank's delta is a partial sum like its matrix
 * product and the all-reduce adds them up to the single-node result.
 */
public final class LoraPlan {

    private LoraPlan() {}

    /**
     * An adapter played at {@code scale}: on every row ({@code id == 0}, as {@code --lora-play}) or on the rows whose
     * sequence asked for adapter {@code id > 0} (named adapters).
     */
    public record Played(LoraAdapter adapter, float scale, int id) {
        public Played {
            Objects.requireNonNull(adapter, "adapter");
            if (!Float.isFinite(scale) || id < 0) {
                throw new IllegalArgumentException("bad LoRA scale " + scale + " or id " + id);
            }
        }
    }

    /** The deltas of {@code shard}'s layers ({@code null} where no adapter touches a layer). */
    public static LayerLora[] forShard(List<Played> played, ModelConfig config, ShardSpec shard) {
        LayerLora[] out = new LayerLora[shard.layerCount()];
        AttentionShape a = config.attention();
        AttentionShape local = ShardTensors.localShape(a, shard);
        int parts = shard.tensorParts();
        int hd = a.headDim();
        int kvStart = ShardTensors.kvHeadStart(a, shard);
        int qStart = ShardTensors.queryHeadStart(a, shard);
        int[] ffn = ShardTensors.ffnRange(config.dims().ffn(), shard); // as the weights are sliced, even or not
        for (int i = 0; i < out.length; i++) {
            int layer = shard.firstLayer() + i;
            List<LayerLora.Term> terms = new ArrayList<>();
            for (Played p : played) {
                for (LoraPair pair : p.adapter().layer(layer)) {
                    float scale = p.scale() * p.adapter().header().scale(pair.rank());
                    if (scale == 0f) {
                        continue;
                    }
                    LowRank d = parts == 1 ? pair.lowRank() : switch (pair.target()) {
                        case Q -> rows(pair, qStart * hd, local.qDim());
                        case K, V -> rows(pair, kvStart * hd, local.kvDim());
                        case GATE, UP -> rows(pair, ffn[0], ffn[1]);
                        case O -> cols(pair, qStart * hd, local.qDim());
                        case DOWN -> cols(pair, ffn[0], ffn[1]);
                    };
                    terms.add(new LayerLora.Term(pair.target(), d, scale, p.id()));
                }
            }
            out[i] = terms.isEmpty() ? null : new LayerLora(terms);
        }
        return out;
    }

    /** Rows {@code [from, from+n)} of B (a slice of the outputs), all of A. */
    private static LowRank rows(LoraPair p, int from, int n) {
        float[] b = Arrays.copyOfRange(p.b(), from * p.rank(), (from + n) * p.rank());
        return new LowRank(LoraPair.name(p.layer(), p.target()) + "[rows " + from + "+" + n + "]", p.a(), b, p.rank(), p.in(), n);
    }

    /** Columns {@code [from, from+n)} of A (a slice of the inputs), all of B. */
    private static LowRank cols(LoraPair p, int from, int n) {
        float[] a = new float[p.rank() * n];
        for (int j = 0; j < p.rank(); j++) {
            System.arraycopy(p.a(), j * p.in() + from, a, j * n, n);
        }
        return new LowRank(LoraPair.name(p.layer(), p.target()) + "[cols " + from + "+" + n + "]", a, p.b(), p.rank(), n, p.out());
    }

    /** Plays {@code played} on {@code model} (its shard's part; an empty list removes every adapter). */
    public static void apply(ml.juno.engine.model.Model model, List<Played> played) {
        model.decoder().setLora(forShard(played, model.config(), model.decoder().shard()));
    }

    /** A list of each played adapter's targets, for logs: {@code a.lora×1.0 (q,v; rank 8)}. */
    public static String describe(List<Played> played) {
        List<String> s = new ArrayList<>();
        for (Played p : played) {
            var h = p.adapter().header();
            s.add(h.targets().stream().map(t -> t.shortName).reduce((x, y) -> x + "," + y).orElse("") + " rank " + h.rank()
                    + " ×" + p.scale());
        }
        return String.join("; ", s);
    }
}
