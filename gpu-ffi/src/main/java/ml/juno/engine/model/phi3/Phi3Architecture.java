package ml.juno.engine.model.phi3;


import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.model.Architecture;
import ml.juno.engine.model.DecoderConfigs;
import ml.juno.engine.model.DecoderModel;
import ml.juno.engine.model.ModelConfig;
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
 * gate and up fused in {@code ffn_up} (gate rows first, SwiGLU), NeoX RoPE. LongRoPE, when the file has it: the
 * per-pair frequency factors {@code rope_factors_long} when the engine's context per sequence exceeds
 * {@code rope.scaling.original_context_length}, else {@code rope_factors_short} (llama.cpp's rule), and the magnitude
 * factor {@code rope.scaling.attn_factor}. Like llama.cpp, the {@code attention.sliding_window} key is ignored (full
 * attention).
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
        return load(file, config, shard, allReduce, config.dims().contextLength());
    }

    @Override
    public DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce, int contextLength) {
        ShardTensors t = new ShardTensors(file, config, shard, allReduce);
        Rope rope = rope(t, file, contextLength);
        DecoderLayer[] layers = t.layers(l -> {
            Attention.Options options = new Attention.Options(t.attentionBiases(l), null, null, 0);
            return DecoderLayer.preNorm(t.norm(l, TensorNames.ATTN_NORM),
                    new Attention(t.fusedAttention(l), t.localShape(), rope, options),
                    t.norm(l, TensorNames.FFN_NORM), t.fusedFfn(l));
        });
        return new TransformerDecoder(t, TransformerDecoder.standardInput(t, 1f), layers, TransformerDecoder.standardHead(t, 0f));
    }

    /** Whether a context of {@code contextLength} positions per sequence runs on the long LongRoPE factors. */
    static boolean longFactors(GgufFile file, ModelConfig config, int contextLength) {
        String arch = config.architecture();
        int original = file.metadata().getInt(GgufKeys.arch(arch, GgufKeys.ROPE_SCALING_ORIG_CTX_LEN), config.dims().contextLength());
        return contextLength > original;
    }

    private static Rope rope(ShardTensors t, GgufFile file, int contextLength) {
        RopeConfig r = t.config().rope();
        ModelTensors m = t.tensors();
        String pick = longFactors(file, t.config(), contextLength) && m.has(TensorNames.global(TensorNames.ROPE_FACTORS_LONG))
                ? TensorNames.global(TensorNames.ROPE_FACTORS_LONG) : TensorNames.global(TensorNames.ROPE_FACTORS_SHORT);
        float[] factors = m.has(TensorNames.global(TensorNames.ROPE_FREQS)) ? m.vector(TensorNames.global(TensorNames.ROPE_FREQS), r.dims() / 2)
                : m.optionalVector(pick, r.dims() / 2).orElse(null);
        float attnFactor = file.metadata().getFloat(GgufKeys.arch(t.config().architecture(), GgufKeys.ROPE_SCALING_ATTN_FACTOR), 1f);
        return new Rope(r.dims(), r.freqBase(), r.freqScale(), factors, true, attnFactor);
    }
}
