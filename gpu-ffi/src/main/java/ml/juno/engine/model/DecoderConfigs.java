package ml.juno.engine.model;


import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;
import ml.juno.engine.gguf.TensorNames;
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
        String arch = md.getString(GgufKeys.GENERAL_ARCHITECTURE);
        int embedding = md.getInt(GgufKeys.arch(arch, GgufKeys.EMBEDDING_LENGTH));
        int heads = md.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_HEAD_COUNT));
        int kvHeads = md.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_HEAD_COUNT_KV), heads);
        int headDim = md.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_KEY_LENGTH), embedding / heads);
        int valueDim = md.getInt(GgufKeys.arch(arch, GgufKeys.ATTENTION_VALUE_LENGTH), headDim);
        if (valueDim != headDim) {
            throw new IllegalArgumentException(arch + ": key length " + headDim + " differs from value length " + valueDim
                    + ", which the engine does not support");
        }
        int vocab = md.has(GgufKeys.arch(arch, GgufKeys.VOCAB_SIZE)) ? md.getInt(GgufKeys.arch(arch, GgufKeys.VOCAB_SIZE))
                : md.has(GgufKeys.TOKENIZER_LIST) ? md.getStringArray(GgufKeys.TOKENIZER_LIST).size()
                : (int) file.tensor(TensorNames.global(TensorNames.TOKEN_EMBD)).shape()[1];
        int ffn = md.getInt(GgufKeys.arch(arch, GgufKeys.FEED_FORWARD_LENGTH), md.getInt(GgufKeys.arch(arch, GgufKeys.EXPERT_FEED_FORWARD_LENGTH), 0));
        ModelDims dims = new ModelDims(md.getInt(GgufKeys.arch(arch, GgufKeys.BLOCK_COUNT)), embedding, ffn, vocab,
                md.getInt(GgufKeys.arch(arch, GgufKeys.CONTEXT_LENGTH)));
        AttentionShape attention = new AttentionShape(heads, kvHeads, headDim, (float) (1.0 / Math.sqrt(headDim)));
        float scale = 1f;
        String scaling = md.getString(GgufKeys.arch(arch, GgufKeys.ROPE_SCALING_TYPE), "none");
        if (scaling.equals("linear")) {
            float factor = md.getFloat(GgufKeys.arch(arch, GgufKeys.ROPE_SCALING_FACTOR), 1f);
            scale = factor > 0f ? 1f / factor : 1f;
        } else if (md.has(GgufKeys.arch(arch, GgufKeys.ROPE_SCALE_LINEAR))) {
            scale = 1f / md.getFloat(GgufKeys.arch(arch, GgufKeys.ROPE_SCALE_LINEAR));
        } else if (scaling.equals("llama3") && file.findTensor(TensorNames.global(TensorNames.ROPE_FREQS)).isEmpty()) {
            throw new IllegalArgumentException("rope scaling 'llama3' needs the " + TensorNames.global(TensorNames.ROPE_FREQS) + " tensor, which "
                    + file.path().getFileName() + " lacks");
        } else if (!scaling.equals("none") && !scaling.equals("llama3") && !scaling.equals("longrope")) {
            throw new IllegalArgumentException("rope scaling '" + scaling + "' is not supported for " + arch);
        }
        RopeConfig rope = new RopeConfig(md.getInt(GgufKeys.arch(arch, GgufKeys.ROPE_DIMENSION_COUNT), headDim),
                md.getFloat(GgufKeys.arch(arch, GgufKeys.ROPE_FREQ_BASE), 10000f), scale, neox);
        return new ModelConfig(arch, dims, attention, rope, md.getFloat(GgufKeys.arch(arch, GgufKeys.ATTENTION_LAYERNORM_RMS_EPS), 1e-5f));
    }
}
