package ml.juno.engine.model.llama;

import static ml.juno.engine.model.ModelKeys.key;

import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufMetadata;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.model.Architecture;
import ml.juno.engine.model.DecoderModel;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.ModelDims;
import ml.juno.engine.model.ModelKeys;
import ml.juno.engine.model.RopeConfig;
import ml.juno.engine.model.ShardSpec;

/** {@code llama}: RMSNorm, normal-pairing RoPE, grouped-query attention, SwiGLU FFN, tied or untied output. */
public final class LlamaArchitecture implements Architecture {

    @Override
    public List<String> names() {
        return List.of("llama");
    }

    @Override
    public ModelConfig config(GgufFile file) {
        GgufMetadata md = file.metadata();
        String arch = md.getString(ModelKeys.ARCHITECTURE);
        int embedding = md.getInt(key(arch, ModelKeys.EMBEDDING_LENGTH));
        int heads = md.getInt(key(arch, ModelKeys.HEAD_COUNT));
        int kvHeads = md.getInt(key(arch, ModelKeys.HEAD_COUNT_KV), heads);
        int headDim = md.getInt(key(arch, ModelKeys.KEY_LENGTH), embedding / heads);
        int vocab = md.has(key(arch, ModelKeys.VOCAB_SIZE)) ? md.getInt(key(arch, ModelKeys.VOCAB_SIZE))
                : md.has(ModelKeys.TOKENS) ? md.getStringArray(ModelKeys.TOKENS).size()
                : (int) file.tensor(ModelKeys.TOKEN_EMBD).shape()[1];
        ModelDims dims = new ModelDims(
                md.getInt(key(arch, ModelKeys.BLOCK_COUNT)), embedding, md.getInt(key(arch, ModelKeys.FEED_FORWARD_LENGTH)),
                vocab, md.getInt(key(arch, ModelKeys.CONTEXT_LENGTH)));
        AttentionShape attention = new AttentionShape(heads, kvHeads, headDim, (float) (1.0 / Math.sqrt(headDim)));
        float scale = 1f;
        String scaling = md.getString(key(arch, ModelKeys.ROPE_SCALING_TYPE), "none");
        if (scaling.equals("linear")) {
            scale = 1f / md.getFloat(key(arch, ModelKeys.ROPE_SCALING_FACTOR));
        } else if (md.has(key(arch, ModelKeys.ROPE_SCALE_LINEAR))) {
            scale = 1f / md.getFloat(key(arch, ModelKeys.ROPE_SCALE_LINEAR));
        } else if (scaling.equals("llama3") && file.findTensor(ModelKeys.ROPE_FREQS).isEmpty()) {
            throw new IllegalArgumentException("rope scaling 'llama3' needs the " + ModelKeys.ROPE_FREQS + " tensor, which "
                    + file.path().getFileName() + " lacks");
        } else if (!scaling.equals("none") && !scaling.equals("llama3")) {
            throw new IllegalArgumentException("rope scaling '" + scaling + "' is not supported for " + arch);
        }
        RopeConfig rope = new RopeConfig(md.getInt(key(arch, ModelKeys.ROPE_DIMENSION_COUNT), headDim),
                md.getFloat(key(arch, ModelKeys.ROPE_FREQ_BASE), 10000f), scale, false);
        return new ModelConfig(arch, dims, attention, rope, md.getFloat(key(arch, ModelKeys.RMS_EPS), 1e-5f));
    }

    @Override
    public DecoderModel load(GgufFile file, ModelConfig config, ShardSpec shard) {
        return LlamaModel.load(file, config, shard);
    }
}
