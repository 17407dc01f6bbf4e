package ml.juno.engine.model;

import static ml.juno.engine.model.ModelKeys.key;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufMetadata;
import ml.juno.engine.kernel.AttentionShape;

/**
 * Reads the {@link ModelConfig} keys every decoder architecture shares ({@code <arch>.embedding_length},
 * {@code .attention.head_count}, {@code .attention.key_length}, {@code .rope.freq_base}, …) with llama.cpp's
 * defaults. The RoPE pairing is the architecture's ({@code neox}: qwen, phi3, gemma; normal: llama).
 */
public final class DecoderConfigs {

    private DecoderConfigs() {}

    public static ModelConfig read(GgufFile file, boolean neox) {
        GgufMetadata md = file.metadata();
        String arch = md.getString(ModelKeys.ARCHITECTURE);
        int embedding = md.getInt(key(arch, ModelKeys.EMBEDDING_LENGTH));
        int heads = md.getInt(key(arch, ModelKeys.HEAD_COUNT));
        int kvHeads = md.getInt(key(arch, ModelKeys.HEAD_COUNT_KV), heads);
        int headDim = md.getInt(key(arch, ModelKeys.KEY_LENGTH), embedding / heads);
        int valueDim = md.getInt(key(arch, ModelKeys.VALUE_LENGTH), headDim);
        if (valueDim != headDim) {
            throw new IllegalArgumentException(arch + ": key length " + headDim + " differs from value length " + valueDim
                    + ", which the engine does not support");
        }
        int vocab = md.has(key(arch, ModelKeys.VOCAB_SIZE)) ? md.getInt(key(arch, ModelKeys.VOCAB_SIZE))
                : md.has(ModelKeys.TOKENS) ? md.getStringArray(ModelKeys.TOKENS).size()
                : (int) file.tensor(ModelKeys.TOKEN_EMBD).shape()[1];
        int ffn = md.getInt(key(arch, ModelKeys.FEED_FORWARD_LENGTH), md.getInt(key(arch, ModelKeys.EXPERT_FFN_LENGTH), 0));
        ModelDims dims = new ModelDims(md.getInt(key(arch, ModelKeys.BLOCK_COUNT)), embedding, ffn, vocab,
                md.getInt(key(arch, ModelKeys.CONTEXT_LENGTH)));
        AttentionShape attention = new AttentionShape(heads, kvHeads, headDim, (float) (1.0 / Math.sqrt(headDim)));
        float scale = 1f;
        String scaling = md.getString(key(arch, ModelKeys.ROPE_SCALING_TYPE), "none");
        if (scaling.equals("linear")) {
            float factor = md.getFloat(key(arch, ModelKeys.ROPE_SCALING_FACTOR), 1f);
            scale = factor > 0f ? 1f / factor : 1f;
        } else if (md.has(key(arch, ModelKeys.ROPE_SCALE_LINEAR))) {
            scale = 1f / md.getFloat(key(arch, ModelKeys.ROPE_SCALE_LINEAR));
        } else if (scaling.equals("llama3") && file.findTensor(ModelKeys.ROPE_FREQS).isEmpty()) {
            throw new IllegalArgumentException("rope scaling 'llama3' needs the " + ModelKeys.ROPE_FREQS + " tensor, which "
                    + file.path().getFileName() + " lacks");
        } else if (!scaling.equals("none") && !scaling.equals("llama3") && !scaling.equals("longrope")) {
            throw new IllegalArgumentException("rope scaling '" + scaling + "' is not supported for " + arch);
        }
        RopeConfig rope = new RopeConfig(md.getInt(key(arch, ModelKeys.ROPE_DIMENSION_COUNT), headDim),
                md.getFloat(key(arch, ModelKeys.ROPE_FREQ_BASE), 10000f), scale, neox);
        return new ModelConfig(arch, dims, attention, rope, md.getFloat(key(arch, ModelKeys.RMS_EPS), 1e-5f));
    }
}
