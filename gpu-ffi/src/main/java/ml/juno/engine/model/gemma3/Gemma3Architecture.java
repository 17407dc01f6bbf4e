package ml.juno.engine.model.gemma3;


import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.model.Architecture;
import ml.juno.engine.model.DecoderConfigs;
import ml.juno.engine.model.DecoderModel;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.RopeConfig;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.model.ShardTensors;
import ml.juno.engine.model.TransformerDecoder;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.model.block.Attention;
import ml.juno.engine.model.block.DecoderLayer;
import ml.juno.engine.model.block.GatedFfn;
import ml.juno.engine.model.block.Rope;

/**
 * {@code gemma3} (llama.cpp {@code llm_build_gemma3}): embeddings scaled by √n_embd, per-head Q/K RMSNorm, NeoX RoPE,
 * RMSNorm after attention and after the FFN ({@code post_attention_norm}, {@code post_ffw_norm}), GELU-gated FFN,
 * output tied to the embeddings. Sliding-window attention: with {@code attention.sliding_window} = W and
 * {@code attention.sliding_window_pattern} = P (default 6), layer {@code il} is local when {@code il % P < P - 1}
 * (five local layers, then one global); local layers attend to the last W positions and rotate with
 * {@code rope.freq_base_swa} (default 10000, unscaled), global ones attend to everything with {@code rope.freq_base}.
 * Attention scale 1/√key_length (1/√(n_embd/n_head) for the 62-layer 27B). Without a window the model is plain
 * global attention and the final logits are soft-capped by {@code final_logit_softcapping} when present.
 */
public final class Gemma3Architecture implements Architecture {
    private static final int DEFAULT_PATTERN = 6;
    private static final float DEFAULT_LOCAL_BASE = 10000f;

    @Override
    public List<String> names() {
        return List.of("gemma3");
    }

    @Override
    public ModelConfig config(GgufFile file) {
        ModelConfig c = DecoderConfigs.read(file, true);
        AttentionShape a = c.attention();
        float scale = c.dims().layers() == 62 ? (float) (1.0 / Math.sqrt((double) (c.dims().embedding() / a.heads())))
                : (float) (1.0 / Math.sqrt(a.headDim()));
        return new ModelConfig(c.architecture(), c.dims(), new AttentionShape(a.heads(), a.kvHeads(), a.headDim(), scale),
                c.rope(), c.normEps());
    }

    @Override
    public DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard, AllReduce allReduce) {
        GgufMetadata md = file.metadata();
        String arch = config.architecture();
        int window = md.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_SLIDING_WINDOW), 0);
        int pattern = md.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_SLIDING_WINDOW_PATTERN), DEFAULT_PATTERN);
        RopeConfig r = config.rope();
        ShardTensors t = new ShardTensors(file, config, shard, allReduce);
        Rope global = TransformerDecoder.standardRope(t);
        Rope local = new Rope(r.dims(), md.getFloat(GgufKeys.arch(arch, GgufKeys.ROPE_FREQ_BASE_SWA), DEFAULT_LOCAL_BASE), 1f, null, true);
        DecoderLayer[] layers = t.layers(l -> {
            boolean isLocal = window > 0 && (pattern == 0 || l % pattern < pattern - 1);
            Attention.Options options = new Attention.Options(t.attentionBiases(l), t.headNormOrNull(l, TensorNames.ATTN_Q_NORM),
                    t.headNormOrNull(l, TensorNames.ATTN_K_NORM), isLocal ? window : 0);
            return new DecoderLayer(t.norm(l, TensorNames.ATTN_NORM),
                    new Attention(t.attention(l), t.localShape(), isLocal ? local : global, options),
                    t.norm(l, TensorNames.ATTN_POST_NORM), t.norm(l, TensorNames.FFN_NORM),
                    t.ffn(l, GatedFfn.Activation.GELU), t.norm(l, TensorNames.FFN_POST_NORM));
        });
        float softcap = window > 0 ? 0f : md.getFloat(GgufKeys.arch(arch, GgufKeys.FINAL_LOGIT_SOFTCAPPING), 0f);
        float embedScale = (float) Math.sqrt(config.dims().embedding());
        return new TransformerDecoder(t, TransformerDecoder.standardInput(t, embedScale), layers,
                TransformerDecoder.standardHead(t, softcap));
    }
}
