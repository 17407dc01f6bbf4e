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
    public static final String VALUE_LENGTH = GgufKeys.ATTENTION_VALUE_LENGTH;
    public static final String SLIDING_WINDOW = GgufKeys.ATTENTION_SLIDING_WINDOW;
    public static final String SLIDING_WINDOW_PATTERN = GgufKeys.ATTENTION_SLIDING_WINDOW_PATTERN;
    public static final String ROPE_FREQ_BASE_SWA = GgufKeys.ROPE_FREQ_BASE_SWA;
    public static final String ROPE_SCALING_ATTN_FACTOR = GgufKeys.ROPE_SCALING_ATTN_FACTOR;
    public static final String ROPE_SCALING_ORIG_CTX_LEN = GgufKeys.ROPE_SCALING_ORIG_CTX_LEN;
    public static final String FINAL_LOGIT_SOFTCAPPING = GgufKeys.FINAL_LOGIT_SOFTCAPPING;
    public static final String EXPERT_COUNT = GgufKeys.EXPERT_COUNT;
    public static final String EXPERT_USED_COUNT = GgufKeys.EXPERT_USED_COUNT;
    public static final String EXPERT_FFN_LENGTH = GgufKeys.EXPERT_FEED_FORWARD_LENGTH;
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
    public static final String ROPE_FACTORS_LONG = TensorNames.global(TensorNames.ROPE_FACTORS_LONG);
    public static final String ROPE_FACTORS_SHORT = TensorNames.global(TensorNames.ROPE_FACTORS_SHORT);

    public static final String ATTN_NORM = TensorNames.ATTN_NORM;
    public static final String ATTN_Q = TensorNames.ATTN_Q;
    public static final String ATTN_K = TensorNames.ATTN_K;
    public static final String ATTN_V = TensorNames.ATTN_V;
    public static final String ATTN_OUTPUT = TensorNames.ATTN_OUT;
    public static final String FFN_NORM = TensorNames.FFN_NORM;
    public static final String FFN_GATE = TensorNames.FFN_GATE;
    public static final String FFN_UP = TensorNames.FFN_UP;
    public static final String FFN_DOWN = TensorNames.FFN_DOWN;
    public static final String ATTN_QKV = TensorNames.ATTN_QKV;
    public static final String ATTN_Q_NORM = TensorNames.ATTN_Q_NORM;
    public static final String ATTN_K_NORM = TensorNames.ATTN_K_NORM;
    public static final String ATTN_POST_NORM = TensorNames.ATTN_POST_NORM;
    public static final String FFN_POST_NORM = TensorNames.FFN_POST_NORM;
    public static final String FFN_GATE_INP = TensorNames.FFN_GATE_INP;
    public static final String FFN_GATE_EXPS = TensorNames.FFN_GATE_EXP;
    public static final String FFN_UP_EXPS = TensorNames.FFN_UP_EXP;
    public static final String FFN_DOWN_EXPS = TensorNames.FFN_DOWN_EXP;

    private ModelKeys() {}

    /** {@code "<arch>.<suffix>"}. */
    public static String key(String arch, String suffix) {
        return GgufKeys.arch(arch, suffix);
    }

    /** {@code "blk.<layer>.<name>.weight"}. */
    public static String block(int layer, String name) {
        return TensorNames.block(layer, name);
    }

    /** {@code "blk.<layer>.<name>.bias"}. */
    public static String blockBias(int layer, String name) {
        return TensorNames.block(layer, name, TensorNames.BIAS);
    }
}
