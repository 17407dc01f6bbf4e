package ml.juno.engine.gguf;

/**
 * GGUF tensor names, mirroring {@code TENSOR_NAMES} in {@code gguf-py/gguf/constants.py}. Global tensors are full
 * names without the {@code .weight} suffix; per-layer tensors are the part after {@code blk.N.}; {@link #block}
 * builds the full name.
 */
public final class TensorNames {

    private TensorNames() {}

    public static final String WEIGHT = "weight";
    public static final String BIAS = "bias";

    // --- global
    public static final String TOKEN_EMBD = "token_embd";
    public static final String TOKEN_EMBD_NORM = "token_embd_norm";
    public static final String TOKEN_TYPES = "token_types";
    public static final String POS_EMBD = "position_embd";
    public static final String OUTPUT_NORM = "output_norm";
    public static final String OUTPUT = "output";
    public static final String ROPE_FREQS = "rope_freqs";
    public static final String ROPE_FACTORS_LONG = "rope_factors_long";
    public static final String ROPE_FACTORS_SHORT = "rope_factors_short";

    // --- per block (blk.N.<name>)
    public static final String ATTN_NORM = "attn_norm";
    public static final String ATTN_NORM_2 = "attn_norm_2";
    public static final String ATTN_QKV = "attn_qkv";
    public static final String ATTN_Q = "attn_q";
    public static final String ATTN_K = "attn_k";
    public static final String ATTN_V = "attn_v";
    public static final String ATTN_OUT = "attn_output";
    public static final String ATTN_ROT_EMBD = "attn_rot_embd";
    public static final String ATTN_Q_NORM = "attn_q_norm";
    public static final String ATTN_K_NORM = "attn_k_norm";
    public static final String ATTN_OUT_NORM = "attn_output_norm";
    public static final String ATTN_POST_NORM = "post_attention_norm";
    public static final String ATTN_SINKS = "attn_sinks";
    public static final String FFN_GATE_INP = "ffn_gate_inp";
    public static final String FFN_GATE_INP_SHEXP = "ffn_gate_inp_shexp";
    public static final String FFN_NORM = "ffn_norm";
    public static final String FFN_POST_NORM = "post_ffw_norm";
    public static final String FFN_GATE = "ffn_gate";
    public static final String FFN_DOWN = "ffn_down";
    public static final String FFN_UP = "ffn_up";
    public static final String FFN_GATE_SHEXP = "ffn_gate_shexp";
    public static final String FFN_DOWN_SHEXP = "ffn_down_shexp";
    public static final String FFN_UP_SHEXP = "ffn_up_shexp";
    public static final String FFN_GATE_EXP = "ffn_gate_exps";
    public static final String FFN_DOWN_EXP = "ffn_down_exps";
    public static final String FFN_UP_EXP = "ffn_up_exps";
    public static final String FFN_EXP_PROBS_B = "exp_probs_b";
    public static final String LAYER_OUT_NORM = "layer_output_norm";

    /** {@code blk.<layer>.<name>.weight}. */
    public static String block(int layer, String name) {
        return block(layer, name, WEIGHT);
    }

    /** {@code blk.<layer>.<name>.<suffix>}, e.g. suffix {@link #BIAS}. */
    public static String block(int layer, String name, String suffix) {
        if (layer < 0) {
            throw new IllegalArgumentException("negative layer " + layer);
        }
        return "blk." + layer + "." + name + "." + suffix;
    }

    /** {@code <name>.weight} for a global tensor, e.g. {@code token_embd.weight}. */
    public static String global(String name) {
        return name + "." + WEIGHT;
    }

    /**
     * The layer index of a {@code blk.N.*} name, or -1 for a global tensor (or a name that only looks like one).
     */
    public static int layerOf(String tensorName) {
        if (!tensorName.startsWith("blk.")) {
            return -1;
        }
        int end = tensorName.indexOf('.', 4);
        if (end <= 4 || end - 4 > 9) {
            return -1;
        }
        int n = 0;
        for (int i = 4; i < end; i++) {
            char c = tensorName.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            n = n * 10 + (c - '0');
        }
        return n;
    }
}
