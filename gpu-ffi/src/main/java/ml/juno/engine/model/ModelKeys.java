package ml.juno.engine.model;

import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.TensorNames;

/**
 * The GGUF metadata keys and tensor names the architectures read: aliases of {@link GgufKeys} and
 * {@link TensorNames} (the one mirror of gguf-py {@code constants.py}), gathered so an architecture's loader reads as
 * a list of names. Keys are per architecture: {@link #key}.
 */
public final class ModelKeys {
    public static final String ARCHITECTURE = GgufKeys.GENERAL_ARCHITECTURE;

    public static final String CONTEXT_LENGTH = GgufKeys.CONTEXT_LENGTH;
    public static final String EMBEDDING_LENGTH = GgufKeys.EMBEDDING_LENGTH;
    public static final String BLOCK_COUNT = GgufKeys.BLOCK_COUNT;
    public static final String FEED_FORWARD_LENGTH = GgufKeys.FEED_FORWARD_LENGTH;
    public static final String VOCAB_SIZE = GgufKeys.VOCAB_SIZE;
    public static final String HEAD_COUNT = GgufKeys.ATTENTION_HEAD_COUNT;
    public static final String HEAD_COUNT_KV = GgufKeys.ATTENTION_HEAD_COUNT_KV;
    public static final String KEY_LENGTH = GgufKeys.ATTENTION_KEY_LENGTH;
    public static final String RMS_EPS = GgufKeys.ATTENTION_LAYERNORM_RMS_EPS;
    public static final String ROPE_DIMENSION_COUNT = GgufKeys.ROPE_DIMENSION_COUNT;
    public static final String ROPE_FREQ_BASE = GgufKeys.ROPE_FREQ_BASE;
    public static final String ROPE_SCALING_TYPE = GgufKeys.ROPE_SCALING_TYPE;
    public static final String ROPE_SCALING_FACTOR = GgufKeys.ROPE_SCALING_FACTOR;
    public static final String ROPE_SCALE_LINEAR = "rope.scale_linear";
    public static final String TOKENS = GgufKeys.TOKENIZER_LIST;

    public static final String TOKEN_EMBD = TensorNames.global(TensorNames.TOKEN_EMBD);
    public static final String OUTPUT_NORM = TensorNames.global(TensorNames.OUTPUT_NORM);
    public static final String OUTPUT = TensorNames.global(TensorNames.OUTPUT);
    public static final String ROPE_FREQS = TensorNames.global(TensorNames.ROPE_FREQS);

    public static final String ATTN_NORM = TensorNames.ATTN_NORM;
    public static final String ATTN_Q = TensorNames.ATTN_Q;
    public static final String ATTN_K = TensorNames.ATTN_K;
    public static final String ATTN_V = TensorNames.ATTN_V;
    public static final String ATTN_OUTPUT = TensorNames.ATTN_OUT;
    public static final String FFN_NORM = TensorNames.FFN_NORM;
    public static final String FFN_GATE = TensorNames.FFN_GATE;
    public static final String FFN_UP = TensorNames.FFN_UP;
    public static final String FFN_DOWN = TensorNames.FFN_DOWN;

    private ModelKeys() {}

    /** {@code "<arch>.<suffix>"}. */
    public static String key(String arch, String suffix) {
        return GgufKeys.arch(arch, suffix);
    }

    /** {@code "blk.<layer>.<name>.weight"}. */
    public static String block(int layer, String name) {
        return TensorNames.block(layer, name);
    }
}
