package ml.juno.engine.model.qwen3moe;


import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;
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
import ml.juno.engine.model.block.Rope;
import ml.juno.engine.model.qwen3.Qwen3Architecture;

/**
 * {@code qwen3moe} (llama.cpp {@code llm_build_qwen3moe}): qwen3 attention (per-head Q/K norm, NeoX RoPE) and a
 * mixture-of-experts FFN: softmax router {@code ffn_gate_inp}, the {@code expert_used_count} most probable of
 * {@code expert_count} experts, their weights re-normalized to sum 1, SwiGLU experts of width
 * {@code expert_feed_forward_length} stored as 3-D {@code ffn_{gate,up,down}_exps}.
 */
public final class Qwen3MoeArchitecture implements Architecture {

    @Override
    public List<String> names() {
        return List.of("qwen3moe");
    }

    @Override
    public ModelConfig config(GgufFile file) {
        return DecoderConfigs.read(file, true);
    }

    @Override
    public DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce) {
        GgufMetadata md = file.metadata();
        String arch = config.architecture();
        int experts = md.getInt(GgufKeys.arch(arch, GgufKeys.EXPERT_COUNT), 0);
        int used = md.getInt(GgufKeys.arch(arch, GgufKeys.EXPERT_USED_COUNT), 0);
        if (experts <= 0 || used <= 0 || used > experts) {
            throw new IllegalArgumentException(arch + ": needs " + GgufKeys.arch(arch, GgufKeys.EXPERT_COUNT) + " and "
                    + GgufKeys.arch(arch, GgufKeys.EXPERT_USED_COUNT) + " (got " + used + " of " + experts + ")");
        }
        int expertFfn = md.getInt(GgufKeys.arch(arch, GgufKeys.EXPERT_FEED_FORWARD_LENGTH), config.dims().ffn());
        ShardTensors t = new ShardTensors(file, config, shard, allReduce);
        Rope rope = TransformerDecoder.standardRope(t);
        DecoderLayer[] layers = t.layers(l -> DecoderLayer.preNorm(t.norm(l, TensorNames.ATTN_NORM),
                new Attention(t.attention(l), t.localShape(), rope, Qwen3Architecture.qkNormed(t, l)),
                t.norm(l, TensorNames.FFN_NORM), t.moe(l, experts, used, expertFfn, true)));
        return new TransformerDecoder(t, TransformerDecoder.standardInput(t, 1f), layers, TransformerDecoder.standardHead(t, 0f));
    }
}
