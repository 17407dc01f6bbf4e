package ml.juno.engine.model.llama;


import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
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
 * {@code llama} (Llama 1/2/3, TinyLlama, Mistral): RMSNorm, normal-pairing RoPE (with {@code rope_freqs} factors for
 * Llama 3 scaling), grouped-query attention, SwiGLU FFN, tied or untied output. With
 * {@code llama.attention.sliding_window} (Mistral v0.1) every layer attends within that window.
 */
public final class LlamaArchitecture implements Architecture {

    @Override
    public List<String> names() {
        return List.of("llama");
    }

    @Override
    public ModelConfig config(GgufFile file) {
        return DecoderConfigs.read(file, false);
    }

    @Override
    public DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce) {
        ShardTensors t = new ShardTensors(file, config, shard, allReduce);
        int window = file.metadata().getInt(GgufKeys.arch(config.architecture(), GgufKeys.ATTENTION_SLIDING_WINDOW), 0);
        Rope rope = TransformerDecoder.standardRope(t);
        DecoderLayer[] layers = t.layers(l -> {
            Attention.Options options = new Attention.Options(t.attentionBiases(l), null, null, window);
            return DecoderLayer.preNorm(t.norm(l, TensorNames.ATTN_NORM),
                    new Attention(t.attention(l), t.localShape(), rope, options),
                    t.norm(l, TensorNames.FFN_NORM), t.ffn(l, GatedFfn.Activation.SILU));
        });
        return new TransformerDecoder(t, TransformerDecoder.standardInput(t, 1f), layers, TransformerDecoder.standardHead(t, 0f));
    }
}
