package ml.juno.engine.model;

import java.util.Arrays;
import java.util.function.IntFunction;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.model.block.Attention;
import ml.juno.engine.model.block.DecoderLayer;
import ml.juno.engine.model.block.GatedFfn;
import ml.juno.engine.model.block.MoeFfn;
import ml.juno.engine.model.block.RmsNorm;

/**
 * The tensors of one shard, checked and sliced for its tensor-parallel rank: the building kit architectures assemble
 * their layers from. Rank {@code r} of {@code P} holds query heads {@code [r·H/P, (r+1)·H/P)}, the KV heads those
 * queries use (KV heads are split when {@code P} divides their count, replicated when their count divides {@code P}),
 * FFN columns {@code [r·F/P, (r+1)·F/P)} (each expert's, for MoE), and the matching input columns of the output
 * projections, so the partial sums of all ranks add up to the whole layer. Output-side biases belong to rank 0 only.
 * Embeddings and norms are replicated; the output head is split by vocabulary rows ({@link #vocabRange}), each rank
 * computing its rows' logits and {@link AllReduce#gatherColumns gathering} the rest.
 */
public final class ShardTensors {
    private final GgufFile file;
    private final ModelTensors tensors;
    private final ModelConfig config;
    private final ShardSpec shard;
    private final AllReduce allReduce;
    private final AttentionShape local;
    private final int kvStart;
    private final int qStart;

    public ShardTensors(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce) {
        this.file = file;
        this.tensors = new ModelTensors(file);
        this.config = config;
        this.shard = shard;
        this.allReduce = allReduce == null ? AllReduce.NONE : allReduce;
        var d = config.dims();
        var a = config.attention();
        if (shard.endLayer() > d.layers()) {
            throw new IllegalArgumentException("shard layers [" + shard.firstLayer() + ", " + shard.endLayer()
                    + ") exceed the model's " + d.layers() + " layers");
        }
        int parts = shard.tensorParts();
        if (parts > 1 && allReduce == null) {
            throw new IllegalArgumentException("tensor-parallel shards (" + parts + " slices) need an all-reduce");
        }
        String impossible = splitProblem(a.heads(), a.kvHeads(), parts);
        if (impossible != null) {
            throw new IllegalArgumentException(impossible);
        }
        int[] split = headSplit(a, shard);
        this.qStart = split[0];
        this.kvStart = split[2];
        this.local = new AttentionShape(split[1], split[3], a.headDim(), a.scale());
    }

    /**
     * How {@code shard}'s tensor-parallel rank splits the heads: {@code {first query head, query heads, first KV head, KV
     * heads}}. Even where the KV heads divide; one replicated KV head per slice where the slices divide them; else whole
     * KV groups per slice, the first slices taking one more (8 heads, 4 KV heads on 3 slices: 4/2/2 query, 2/1/1 KV).
     * The split must be possible ({@link #splitProblem}).
     */
    public static int[] headSplit(AttentionShape a, ShardSpec shard) {
        int parts = shard.tensorParts();
        int rank = shard.tensorRank();
        int group = a.heads() / a.kvHeads();
        if (a.kvHeads() % parts == 0) {
            int kvLocal = a.kvHeads() / parts;
            int hLocal = a.heads() / parts;
            return new int[] {rank * hLocal, hLocal, rank * kvLocal, kvLocal};
        }
        if (parts % a.kvHeads() == 0) {
            int hLocal = a.heads() / parts;
            return new int[] {rank * hLocal, hLocal, rank * hLocal / group, 1};
        }
        int base = a.kvHeads() / parts;
        int extra = a.kvHeads() % parts;
        int kvLocal = base + (rank < extra ? 1 : 0);
        int kvStart = rank * base + Math.min(rank, extra);
        return new int[] {kvStart * group, kvLocal * group, kvStart, kvLocal};
    }

    /** The heads and KV heads of {@code shard}'s tensor-parallel rank ({@link #headSplit}). */
    public static AttentionShape localShape(AttentionShape a, ShardSpec shard) {
        int[] s = headSplit(a, shard);
        return new AttentionShape(s[1], s[3], a.headDim(), a.scale());
    }

    /** The first KV head {@code shard}'s rank holds. */
    public static int kvHeadStart(AttentionShape a, ShardSpec shard) {
        return headSplit(a, shard)[2];
    }

    /** The first query head {@code shard}'s rank holds. */
    public static int queryHeadStart(AttentionShape a, ShardSpec shard) {
        return headSplit(a, shard)[0];
    }

    /**
     * Refuses a tensor-parallel split of {@code config} into {@code parts} slices that cannot work ({@link #splitProblem});
     * the coordinator checks it before any node loads.
     */
    public static void requireSplittable(ModelConfig config, int parts) {
        var a = config.attention();
        String problem = parts < 1 ? "a tensor-parallel split needs at least one slice" : splitProblem(a.heads(), a.kvHeads(), parts);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    public ModelConfig config() {
        return config;
    }

    /**
     * The shard's decoder layers, in order: {@code layer} builds the one of model layer {@code l} (the loop every
     * architecture shares; only what a layer is made of differs).
     */
    public DecoderLayer[] layers(IntFunction<DecoderLayer> layer) {
        DecoderLayer[] layers = new DecoderLayer[shard.layerCount()];
        for (int i = 0; i < layers.length; i++) {
            layers[i] = layer.apply(shard.firstLayer() + i);
        }
        return layers;
    }

    public ShardSpec shard() {
        return shard;
    }

    public AllReduce allReduce() {
        return allReduce;
    }

    public ModelTensors tensors() {
        return tensors;
    }

    public GgufFile file() {
        return file;
    }

    /** This rank's attention geometry (its heads and KV heads). */
    public AttentionShape localShape() {
        return local;
    }

    private int parts() {
        return shard.tensorParts();
    }

    private int rank() {
        return shard.tensorRank();
    }

    /**
     * Why {@code heads} query heads and {@code kvHeads} KV heads cannot be split into {@code parts} tensor-parallel
     * slices, or null when they can: evenly, with a replicated KV head per slice (more slices than KV heads, dividing
     * them), or unevenly by whole KV groups (more KV heads than slices: 4 KV heads on 3 slices are 2/1/1).
     */
    public static String splitProblem(int heads, int kvHeads, int parts) {
        if (parts <= 1) {
            return null;
        }
        if (kvHeads <= 0 || heads % kvHeads != 0) {
            return "cannot split " + heads + " heads and " + kvHeads + " KV heads: the heads are not whole KV groups";
        }
        if (kvHeads % parts == 0 || kvHeads > parts || (parts % kvHeads == 0 && heads % parts == 0)) {
            return null;
        }
        return "cannot split " + heads + " heads and " + kvHeads + " KV heads into " + parts + " tensor-parallel slices (use at most "
                + kvHeads + " slices, or a number of slices that " + kvHeads + " divides and that divides " + heads + ")";
    }

    /**
     * Rows {@code [start, start+count)} of an FFN width {@code total} that {@code shard}'s rank computes: an even share
     * when it is a whole number of blocks, else shares of whole blocks (256 columns where {@code total} has one for every
     * slice, which fits every GGML block size, else 32, else single columns), the first ranks taking one more. The same for every
     * layer and weight type, so a LoRA delta ({@code LoraPlan}) is sliced exactly as the weights are.
     */
    public static int[] ffnRange(int total, ShardSpec shard) {
        return range(total, shard, FFN_UNITS, "an FFN width");
    }

    /**
     * Rows {@code [start, start+count)} of the output head (of {@code vocab} rows) that {@code shard}'s rank computes:
     * as {@link #ffnRange}, in shares of 64 rows where the vocabulary has one for every slice (the packed kernels' groups
     * of 16 rows stay whole), else 16, else single rows. Slices are contiguous in rank order.
     */
    public static int[] vocabRange(int vocab, ShardSpec shard) {
        return range(vocab, shard, VOCAB_UNITS, "a vocabulary");
    }

    private static final int[] FFN_UNITS = {256, 32};
    private static final int[] VOCAB_UNITS = {64, 16};

    private static int[] range(int total, ShardSpec shard, int[] sizes, String what) {
        int parts = shard.tensorParts();
        int rank = shard.tensorRank();
        int unit = 1;
        for (int u : sizes) { // the largest block that still leaves every slice some
            if (total % u == 0 && total / u >= parts) {
                unit = u;
                break;
            }
        }
        if (total % parts == 0 && (total / parts) % unit == 0) {
            int w = total / parts;
            return new int[] {rank * w, w};
        }
        int units = total / unit;
        if (units < parts) {
            throw new IllegalArgumentException("cannot split " + what + " of " + total + " into " + parts + " tensor-parallel slices");
        }
        int base = units / parts;
        int extra = units % parts;
        return new int[] {(rank * base + Math.min(rank, extra)) * unit, (base + (rank < extra ? 1 : 0)) * unit};
    }



    // --- attention

    /** Q/K/V/O of layer {@code l} from {@code attn_q/k/v/output}, sliced. */
    public Attention.AttentionWeights attention(int l) {
        var a = config.attention();
        int dim = config.dims().embedding();
        return slice(new Attention.AttentionWeights(
                tensors.matrix(TensorNames.block(l, TensorNames.ATTN_Q), dim, a.qDim()),
                tensors.matrix(TensorNames.block(l, TensorNames.ATTN_K), dim, a.kvDim()),
                tensors.matrix(TensorNames.block(l, TensorNames.ATTN_V), dim, a.kvDim()),
                tensors.matrix(TensorNames.block(l, TensorNames.ATTN_OUT), a.qDim(), dim)));
    }

    /** Q/K/V/O of layer {@code l} with Q, K and V fused in {@code attn_qkv} (rows: Q, then K, then V), sliced. */
    public Attention.AttentionWeights fusedAttention(int l) {
        var a = config.attention();
        int dim = config.dims().embedding();
        WeightMatrix qkv = tensors.matrix(TensorNames.block(l, TensorNames.ATTN_QKV), dim, a.qDim() + 2 * a.kvDim());
        return slice(new Attention.AttentionWeights(qkv.rowSlice(0, a.qDim()), qkv.rowSlice(a.qDim(), a.kvDim()),
                qkv.rowSlice(a.qDim() + a.kvDim(), a.kvDim()),
                tensors.matrix(TensorNames.block(l, TensorNames.ATTN_OUT), a.qDim(), dim)));
    }

    private Attention.AttentionWeights slice(Attention.AttentionWeights w) {
        if (parts() == 1) {
            return w;
        }
        int hd = local.headDim();
        return new Attention.AttentionWeights(w.q().rowSlice(qStart * hd, local.qDim()),
                w.k().rowSlice(kvStart * hd, local.kvDim()), w.v().rowSlice(kvStart * hd, local.kvDim()),
                contiguous(w.o().columnSlice(qStart * hd, local.qDim())));
    }

    /** A column slice copied to memory of its own, rows next to each other ({@link WeightMatrix#compactInto}). */
    private WeightMatrix contiguous(WeightMatrix slice) {
        return slice.compactInto(file.allocateCopy(slice.byteSize()));
    }

    /** The optional {@code attn_q/k/v.bias} and {@code attn_output.bias} of layer {@code l}, sliced. */
    public Attention.Biases attentionBiases(int l) {
        var a = config.attention();
        int hd = local.headDim();
        float[] q = tensors.optionalVector(TensorNames.block(l, TensorNames.ATTN_Q, TensorNames.BIAS), a.qDim()).orElse(null);
        float[] k = tensors.optionalVector(TensorNames.block(l, TensorNames.ATTN_K, TensorNames.BIAS), a.kvDim()).orElse(null);
        float[] v = tensors.optionalVector(TensorNames.block(l, TensorNames.ATTN_V, TensorNames.BIAS), a.kvDim()).orElse(null);
        float[] o = tensors.optionalVector(TensorNames.block(l, TensorNames.ATTN_OUT, TensorNames.BIAS), config.dims().embedding()).orElse(null);
        return new Attention.Biases(part(q, qStart * hd, local.qDim()), part(k, kvStart * hd, local.kvDim()),
                part(v, kvStart * hd, local.kvDim()), rank() == 0 ? o : null);
    }

    private static float[] part(float[] v, int from, int n) {
        return v == null ? null : Arrays.copyOfRange(v, from, from + n);
    }

    // --- norms

    /** The RMSNorm {@code blk.l.<name>} over the embedding. */
    public RmsNorm norm(int l, String name) {
        return new RmsNorm(tensors.vector(TensorNames.block(l, name), config.dims().embedding()), config.normEps());
    }

    /** The per-head RMSNorm {@code blk.l.<name>} (Q/K norm), {@code headDim} wide; {@code null} when absent. */
    public RmsNorm headNormOrNull(int l, String name) {
        String n = TensorNames.block(l, name);
        return tensors.has(n) ? new RmsNorm(tensors.vector(n, local.headDim()), config.normEps()) : null;
    }

    // --- feed-forward

    /** {@code ffn_gate/up/down} of layer {@code l}, sliced by FFN columns. */
    public GatedFfn ffn(int l, GatedFfn.Activation activation) {
        int dim = config.dims().embedding();
        int ffn = config.dims().ffn();
        return sliceFfn(tensors.matrix(TensorNames.block(l, TensorNames.FFN_GATE), dim, ffn),
                tensors.matrix(TensorNames.block(l, TensorNames.FFN_UP), dim, ffn),
                tensors.matrix(TensorNames.block(l, TensorNames.FFN_DOWN), ffn, dim), activation, true);
    }

    /** Gate and up fused in {@code ffn_up} (rows: gate, then up), SiLU, sliced. */
    public GatedFfn fusedFfn(int l) {
        int dim = config.dims().embedding();
        int ffn = config.dims().ffn();
        WeightMatrix gateUp = tensors.matrix(TensorNames.block(l, TensorNames.FFN_UP), dim, 2 * ffn);
        return sliceFfn(gateUp.rowSlice(0, ffn), gateUp.rowSlice(ffn, ffn),
                tensors.matrix(TensorNames.block(l, TensorNames.FFN_DOWN), ffn, dim), GatedFfn.Activation.SILU, true);
    }

    /**
     * Gate and up sliced by rows, down by columns; {@code copy}: down's slice copied to be contiguous (not for routed
     * experts, which stay where the file has them so that they can be streamed).
     */
    private GatedFfn sliceFfn(WeightMatrix gate, WeightMatrix up, WeightMatrix down, GatedFfn.Activation activation,
                              boolean copy) {
        if (parts() == 1) {
            return new GatedFfn(gate, up, down, activation);
        }
        int[] range = ffnRange(gate.rows(), shard);
        int from = range[0];
        int w = range[1];
        WeightMatrix d = down.columnSlice(from, w);
        return new GatedFfn(gate.rowSlice(from, w), up.rowSlice(from, w), copy ? contiguous(d) : d, activation);
    }

    /**
     * Softmax-gated mixture of experts of layer {@code l}: router {@code ffn_gate_inp}, experts in the 3-D
     * {@code ffn_{gate,up,down}_exps}, {@code used} per token; every expert's FFN columns sliced.
     */
    public MoeFfn moe(int l, int experts, int used, int expertFfn, boolean normalize) {
        int dim = config.dims().embedding();
        WeightMatrix router = tensors.matrix(TensorNames.block(l, TensorNames.FFN_GATE_INP), dim, experts);
        WeightMatrix[] gate = tensors.experts(TensorNames.block(l, TensorNames.FFN_GATE_EXP), dim, expertFfn, experts);
        WeightMatrix[] up = tensors.experts(TensorNames.block(l, TensorNames.FFN_UP_EXP), dim, expertFfn, experts);
        WeightMatrix[] down = tensors.experts(TensorNames.block(l, TensorNames.FFN_DOWN_EXP), expertFfn, dim, experts);
        GatedFfn[] ffns = new GatedFfn[experts];
        for (int e = 0; e < experts; e++) {
            ffns[e] = sliceFfn(gate[e], up[e], down[e], GatedFfn.Activation.SILU, false);
        }
        return new MoeFfn(router, ffns, used, normalize);
    }
}
