package ml.juno.engine.model.qwen2;

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
 * {@code qwen2} (Qwen2, Qwen2.5; llama.cpp {@code llm_build_qwen2}): the llama layout with biases on the Q/K/V
 * projections and NeoX RoPE with the base from {@code qwen2.rope.freq_base}.
 */
public final class Qwen2Architecture implements Architecture {

    @Override
    public List<String> names() {
        return List.of("qwen2");
    }

    @Override
    public ModelConfig config(GgufFile file) {
        return DecoderConfigs.read(file, true);
    }

    @Override
    public DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce) {
        ShardTensors t = new ShardTensors(file, config, shard, allReduce);
        Rope rope = TransformerDecoder.standardRope(t);
        DecoderLayer[] layers = t.layers(l -> {
            Attention.Options options = new Attention.Options(t.attentionBiases(l), null, null, 0);
            return DecoderLayer.preNorm(t.norm(l, TensorNames.ATTN_NORM),
                    new Attention(t.attention(l), t.localShape(), rope, options),
                    t.norm(l, TensorNames.FFN_NORM), t.ffn(l, GatedFfn.Activation.SILU));
        });
        return new TransformerDecoder(t, TransformerDecoder.standardInput(t, 1f), layers, TransformerDecoder.standardHead(t, 0f));
    }
}
