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
 * Embeddings, norms and the output head are replicated.
 */
public final class ShardTensors {
    private final GgufFile file;
    private final ModelTensors tensors;
    private final ModelConfig config;
    private final ShardSpec shard;
    private final AllReduce allReduce;
    private final AttentionShape local;
    private final int kvStart;

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
        if (a.heads() % parts != 0 || (a.kvHeads() % parts != 0 && parts % a.kvHeads() != 0)) {
            throw new IllegalArgumentException("cannot split " + a.heads() + " heads and " + a.kvHeads() + " KV heads into "
                    + parts + " tensor-parallel slices");
        }
        this.kvStart = kvHeadStart(a, shard);
        this.local = localShape(a, shard);
    }

    /** The heads and KV heads of {@code shard}'s tensor-parallel rank (KV heads split or, when fewer than ranks, one each). */
    public static AttentionShape localShape(AttentionShape a, ShardSpec shard) {
        int parts = shard.tensorParts();
        int kvLocal = a.kvHeads() % parts == 0 ? a.kvHeads() / parts : 1;
        return new AttentionShape(a.heads() / parts, kvLocal, a.headDim(), a.scale());
    }

    /** The first KV head {@code shard}'s rank holds. */
    public static int kvHeadStart(AttentionShape a, ShardSpec shard) {
        int parts = shard.tensorParts();
        int hLocal = a.heads() / parts;
        int group = a.heads() / a.kvHeads();
        return a.kvHeads() % parts == 0 ? shard.tensorRank() * (a.kvHeads() / parts) : shard.tensorRank() * hLocal / group;
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

    /** Width {@code total} split across ranks: this rank's share, refused when uneven. */
    public int localWidth(String what, int total) {
        if (total % parts() != 0) {
            throw new IllegalArgumentException("cannot split " + what + " of " + total + " into " + parts()
                    + " tensor-parallel slices");
        }
        return total / parts();
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
        return new Attention.AttentionWeights(w.q().rowSlice(rank() * local.qDim(), local.qDim()),
                w.k().rowSlice(kvStart * hd, local.kvDim()), w.v().rowSlice(kvStart * hd, local.kvDim()),
                w.o().columnSlice(rank() * local.qDim(), local.qDim()));
    }

    /** The optional {@code attn_q/k/v.bias} and {@code attn_output.bias} of layer {@code l}, sliced. */
    public Attention.Biases attentionBiases(int l) {
        var a = config.attention();
        int hd = local.headDim();
        float[] q = tensors.optionalVector(TensorNames.block(l, TensorNames.ATTN_Q, TensorNames.BIAS), a.qDim()).orElse(null);
        float[] k = tensors.optionalVector(TensorNames.block(l, TensorNames.ATTN_K, TensorNames.BIAS), a.kvDim()).orElse(null);
        float[] v = tensors.optionalVector(TensorNames.block(l, TensorNames.ATTN_V, TensorNames.BIAS), a.kvDim()).orElse(null);
        float[] o = tensors.optionalVector(TensorNames.block(l, TensorNames.ATTN_OUT, TensorNames.BIAS), config.dims().embedding()).orElse(null);
        return new Attention.Biases(part(q, rank() * local.qDim(), local.qDim()), part(k, kvStart * hd, local.kvDim()),
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
                tensors.matrix(TensorNames.block(l, TensorNames.FFN_DOWN), ffn, dim), activation);
    }

    /** Gate and up fused in {@code ffn_up} (rows: gate, then up), SiLU, sliced. */
    public GatedFfn fusedFfn(int l) {
        int dim = config.dims().embedding();
        int ffn = config.dims().ffn();
        WeightMatrix gateUp = tensors.matrix(TensorNames.block(l, TensorNames.FFN_UP), dim, 2 * ffn);
        return sliceFfn(gateUp.rowSlice(0, ffn), gateUp.rowSlice(ffn, ffn),
                tensors.matrix(TensorNames.block(l, TensorNames.FFN_DOWN), ffn, dim), GatedFfn.Activation.SILU);
    }

    private GatedFfn sliceFfn(WeightMatrix gate, WeightMatrix up, WeightMatrix down, GatedFfn.Activation activation) {
        if (parts() == 1) {
            return new GatedFfn(gate, up, down, activation);
        }
        int w = localWidth("FFN width", gate.rows());
        int from = rank() * w;
        return new GatedFfn(gate.rowSlice(from, w), up.rowSlice(from, w), down.columnSlice(from, w), activation);
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
            ffns[e] = sliceFfn(gate[e], up[e], down[e], GatedFfn.Activation.SILU);
        }
        return new MoeFfn(router, ffns, used, normalize);
    }
}
