package ml.juno.engine.model.qwen3;

import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.model.Architecture;
import ml.juno.engine.model.DecoderConfigs;
import ml.juno.engine.model.DecoderModel;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.model.ShardTensors;
import ml.juno.engine.model.TransformerDecoder;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.model.block.Attention;
import ml.juno.engine.model.block.DecoderLayer;
import ml.juno.engine.model.block.GatedFfn;
import ml.juno.engine.model.block.Rope;

/**
 * {@code qwen3} (llama.cpp {@code llm_build_qwen3}): no projection biases; each Q and K head is RMS-normalized
 * ({@code attn_q_norm}/{@code attn_k_norm}, head-dim wide) before NeoX RoPE; the head size comes from
 * {@code qwen3.attention.key_length}.
 */
public final class Qwen3Architecture implements Architecture {

    @Override
    public List<String> names() {
        return List.of("qwen3");
    }

    @Override
    public ModelConfig config(GgufFile file) {
        return DecoderConfigs.read(file, true);
    }

    @Override
    public DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce) {
        ShardTensors t = new ShardTensors(file, config, shard, allReduce);
        Rope rope = TransformerDecoder.standardRope(t);
        DecoderLayer[] layers = t.layers(l -> DecoderLayer.preNorm(t.norm(l, TensorNames.ATTN_NORM),
                new Attention(t.attention(l), t.localShape(), rope, qkNormed(t, l)),
                t.norm(l, TensorNames.FFN_NORM), t.ffn(l, GatedFfn.Activation.SILU)));
        return new TransformerDecoder(t, TransformerDecoder.standardInput(t, 1f), layers, TransformerDecoder.standardHead(t, 0f));
    }

    /** Qwen3-style attention options of layer {@code l}: per-head Q/K RMSNorm, biases if the file has them. */
    public static Attention.Options qkNormed(ShardTensors t, int l) {
        return new Attention.Options(t.attentionBiases(l), t.headNormOrNull(l, TensorNames.ATTN_Q_NORM),
                t.headNormOrNull(l, TensorNames.ATTN_K_NORM), 0);
    }
}
