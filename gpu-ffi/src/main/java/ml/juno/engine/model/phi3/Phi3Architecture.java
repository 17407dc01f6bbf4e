package ml.juno.engine.model.phi3;

import static ml.juno.engine.model.ModelKeys.key;

import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.model.Architecture;
import ml.juno.engine.model.DecoderConfigs;
import ml.juno.engine.model.DecoderModel;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.ModelKeys;
import ml.juno.engine.model.ModelTensors;
import ml.juno.engine.model.RopeConfig;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.model.ShardTensors;
import ml.juno.engine.model.TransformerDecoder;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.model.block.Attention;
import ml.juno.engine.model.block.DecoderLayer;
import ml.juno.engine.model.block.Rope;

/**
 * {@code phi3} (Phi-3/3.5 mini and medium; llama.cpp {@code llm_build_phi3}): Q, K and V fused in {@code attn_qkv},
 * gate and up fused in {@code ffn_up} (gate rows first, SwiGLU), NeoX RoPE. LongRoPE: the per-pair frequency factors
 * {@code rope_factors_short} (for contexts up to {@code rope.scaling.original_context_length}, which is what the engine
 * runs) and the magnitude factor {@code rope.scaling.attn_factor}, when the file has them. Like llama.cpp, the
 * {@code attention.sliding_window} key is ignored (full attention).
 */
public final class Phi3Architecture implements Architecture {

    @Override
    public List<String> names() {
        return List.of("phi3");
    }

    @Override
    public ModelConfig config(GgufFile file) {
        return DecoderConfigs.read(file, true);
    }

    @Override
    public DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce) {
        ShardTensors t = new ShardTensors(file, config, shard, allReduce);
        Rope rope = rope(t, file);
        DecoderLayer[] layers = new DecoderLayer[shard.layerCount()];
        for (int i = 0; i < layers.length; i++) {
            int l = shard.firstLayer() + i;
            Attention.Options options = new Attention.Options(t.attentionBiases(l), null, null, 0);
            layers[i] = DecoderLayer.preNorm(t.norm(l, ModelKeys.ATTN_NORM),
                    new Attention(t.fusedAttention(l), t.localShape(), rope, options),
                    t.norm(l, ModelKeys.FFN_NORM), t.fusedFfn(l));
        }
        return new TransformerDecoder(t, TransformerDecoder.standardInput(t, 1f), layers, TransformerDecoder.standardHead(t, 0f));
    }

    private static Rope rope(ShardTensors t, GgufFile file) {
        RopeConfig r = t.config().rope();
        ModelTensors m = t.tensors();
        float[] factors = m.has(ModelKeys.ROPE_FREQS) ? m.vector(ModelKeys.ROPE_FREQS, r.dims() / 2)
                : m.optionalVector(ModelKeys.ROPE_FACTORS_SHORT, r.dims() / 2).orElse(null);
        float attnFactor = file.metadata().getFloat(key(t.config().architecture(), ModelKeys.ROPE_SCALING_ATTN_FACTOR), 1f);
        return new Rope(r.dims(), r.freqBase(), r.freqScale(), factors, true, attnFactor);
    }
}
