package ml.juno.engine.model;

/**
 * GGUF metadata key suffixes and tensor names the architectures read (mirroring gguf-py {@code constants.py}
 * {@code Keys.LLM/Attention/Rope} and {@code TENSOR_NAMES}). Keys are per architecture: {@link #key}.
 */
public final class ModelKeys {
    public static final String ARCHITECTURE = "general.architecture";

    public static final String CONTEXT_LENGTH = "context_length";
    public static final String EMBEDDING_LENGTH = "embedding_length";
    public static final String BLOCK_COUNT = "block_count";
    public static final String FEED_FORWARD_LENGTH = "feed_forward_length";
    public static final String VOCAB_SIZE = "vocab_size";
    public static final String HEAD_COUNT = "attention.head_count";
    public static final String HEAD_COUNT_KV = "attention.head_count_kv";
    public static final String KEY_LENGTH = "attention.key_length";
    public static final String RMS_EPS = "attention.layer_norm_rms_epsilon";
    public static final String ROPE_DIMENSION_COUNT = "rope.dimension_count";
    public static final String ROPE_FREQ_BASE = "rope.freq_base";
    public static final String ROPE_SCALING_TYPE = "rope.scaling.type";
    public static final String ROPE_SCALING_FACTOR = "rope.scaling.factor";
    public static final String ROPE_SCALE_LINEAR = "rope.scale_linear";
    public static final String TOKENS = "tokenizer.ggml.tokens";

    public static final String TOKEN_EMBD = "token_embd.weight";
    public static final String OUTPUT_NORM = "output_norm.weight";
    public static final String OUTPUT = "output.weight";
    public static final String ROPE_FREQS = "rope_freqs.weight";

    public static final String ATTN_NORM = "attn_norm";
    public static final String ATTN_Q = "attn_q";
    public static final String ATTN_K = "attn_k";
    public static final String ATTN_V = "attn_v";
    public static final String ATTN_OUTPUT = "attn_output";
    public static final String FFN_NORM = "ffn_norm";
    public static final String FFN_GATE = "ffn_gate";
    public static final String FFN_UP = "ffn_up";
    public static final String FFN_DOWN = "ffn_down";

    private ModelKeys() {}

    /** {@code "<arch>.<suffix>"}. */
    public static String key(String arch, String suffix) {
        return arch + "." + suffix;
    }

    /** {@code "blk.<layer>.<name>.weight"}. */
    public static String block(int layer, String name) {
        return "blk." + layer + "." + name + ".weight";
    }
}
