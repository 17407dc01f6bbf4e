package ml.juno.engine.gguf;

/**
 * GGUF metadata key names, mirroring {@code gguf-py/gguf/constants.py} ({@code class Keys}). Architecture-specific
 * keys are suffixes: build the full key with {@link #arch(String, String)}, e.g.
 * {@code arch("llama", CONTEXT_LENGTH)} is {@code llama.context_length}.
 */
public final class GgufKeys {

    private GgufKeys() {}

    /** {@code "<arch>.<suffix>"}. */
    public static String arch(String arch, String suffix) {
        return arch + "." + suffix;
    }

    // --- Keys.General
    public static final String GENERAL_TYPE = "general.type";
    public static final String GENERAL_ARCHITECTURE = "general.architecture";
    public static final String GENERAL_QUANTIZATION_VERSION = "general.quantization_version";
    public static final String GENERAL_ALIGNMENT = "general.alignment";
    public static final String GENERAL_FILE_TYPE = "general.file_type";
    public static final String GENERAL_NAME = "general.name";
    public static final String GENERAL_AUTHOR = "general.author";
    public static final String GENERAL_VERSION = "general.version";
    public static final String GENERAL_ORGANIZATION = "general.organization";
    public static final String GENERAL_FINETUNE = "general.finetune";
    public static final String GENERAL_BASENAME = "general.basename";
    public static final String GENERAL_DESCRIPTION = "general.description";
    public static final String GENERAL_SIZE_LABEL = "general.size_label";
    public static final String GENERAL_LICENSE = "general.license";
    public static final String GENERAL_URL = "general.url";
    public static final String GENERAL_SOURCE_URL = "general.source.url";
    public static final String GENERAL_SOURCE_HF_REPO = "general.source.huggingface.repository";
    public static final String GENERAL_TAGS = "general.tags";
    public static final String GENERAL_LANGUAGES = "general.languages";

    // --- Keys.LLM (suffixes of "<arch>.")
    public static final String VOCAB_SIZE = "vocab_size";
    public static final String CONTEXT_LENGTH = "context_length";
    public static final String EMBEDDING_LENGTH = "embedding_length";
    public static final String BLOCK_COUNT = "block_count";
    public static final String LEADING_DENSE_BLOCK_COUNT = "leading_dense_block_count";
    public static final String FEED_FORWARD_LENGTH = "feed_forward_length";
    public static final String EXPERT_FEED_FORWARD_LENGTH = "expert_feed_forward_length";
    public static final String EXPERT_SHARED_FEED_FORWARD_LENGTH = "expert_shared_feed_forward_length";
    public static final String USE_PARALLEL_RESIDUAL = "use_parallel_residual";
    public static final String TENSOR_DATA_LAYOUT = "tensor_data_layout";
    public static final String EXPERT_COUNT = "expert_count";
    public static final String EXPERT_USED_COUNT = "expert_used_count";
    public static final String EXPERT_SHARED_COUNT = "expert_shared_count";
    public static final String EXPERT_WEIGHTS_SCALE = "expert_weights_scale";
    public static final String EXPERT_WEIGHTS_NORM = "expert_weights_norm";
    public static final String EXPERT_GATING_FUNC = "expert_gating_func";
    public static final String POOLING_TYPE = "pooling_type";
    public static final String LOGIT_SCALE = "logit_scale";
    public static final String EMBEDDING_SCALE = "embedding_scale";
    public static final String RESIDUAL_SCALE = "residual_scale";
    public static final String ATTN_LOGIT_SOFTCAPPING = "attn_logit_softcapping";
    public static final String FINAL_LOGIT_SOFTCAPPING = "final_logit_softcapping";
    public static final String DECODER_START_TOKEN_ID = "decoder_start_token_id";

    // --- Keys.Attention (suffixes of "<arch>.")
    public static final String ATTENTION_HEAD_COUNT = "attention.head_count";
    public static final String ATTENTION_HEAD_COUNT_KV = "attention.head_count_kv";
    public static final String ATTENTION_MAX_ALIBI_BIAS = "attention.max_alibi_bias";
    public static final String ATTENTION_CLAMP_KQV = "attention.clamp_kqv";
    public static final String ATTENTION_KEY_LENGTH = "attention.key_length";
    public static final String ATTENTION_VALUE_LENGTH = "attention.value_length";
    public static final String ATTENTION_LAYERNORM_EPS = "attention.layer_norm_epsilon";
    public static final String ATTENTION_LAYERNORM_RMS_EPS = "attention.layer_norm_rms_epsilon";
    public static final String ATTENTION_CAUSAL = "attention.causal";
    public static final String ATTENTION_Q_LORA_RANK = "attention.q_lora_rank";
    public static final String ATTENTION_KV_LORA_RANK = "attention.kv_lora_rank";
    public static final String ATTENTION_SLIDING_WINDOW = "attention.sliding_window";
    public static final String ATTENTION_SLIDING_WINDOW_PATTERN = "attention.sliding_window_pattern";
    public static final String ATTENTION_SCALE = "attention.scale";

    // --- Keys.Rope (suffixes of "<arch>.")
    public static final String ROPE_DIMENSION_COUNT = "rope.dimension_count";
    public static final String ROPE_DIMENSION_SECTIONS = "rope.dimension_sections";
    public static final String ROPE_FREQ_BASE = "rope.freq_base";
    public static final String ROPE_FREQ_BASE_SWA = "rope.freq_base_swa";
    public static final String ROPE_SCALING_TYPE = "rope.scaling.type";
    /** The older linear RoPE scale key some converters wrote ({@code <arch>.rope.scale_linear}). */
    public static final String ROPE_SCALE_LINEAR = "rope.scale_linear";
    public static final String ROPE_SCALING_FACTOR = "rope.scaling.factor";
    public static final String ROPE_SCALING_ATTN_FACTOR = "rope.scaling.attn_factor";
    public static final String ROPE_SCALING_ORIG_CTX_LEN = "rope.scaling.original_context_length";
    public static final String ROPE_SCALING_FINETUNED = "rope.scaling.finetuned";
    public static final String ROPE_SCALING_YARN_LOG_MUL = "rope.scaling.yarn_log_multiplier";

    // --- Keys.SSM (suffixes of "<arch>.")
    public static final String SSM_CONV_KERNEL = "ssm.conv_kernel";
    public static final String SSM_INNER_SIZE = "ssm.inner_size";
    public static final String SSM_STATE_SIZE = "ssm.state_size";
    public static final String SSM_TIME_STEP_RANK = "ssm.time_step_rank";

    // --- Keys.Tokenizer
    public static final String TOKENIZER_MODEL = "tokenizer.ggml.model";
    public static final String TOKENIZER_PRE = "tokenizer.ggml.pre";
    public static final String TOKENIZER_LIST = "tokenizer.ggml.tokens";
    public static final String TOKENIZER_TOKEN_TYPE = "tokenizer.ggml.token_type";
    public static final String TOKENIZER_TOKEN_TYPE_COUNT = "tokenizer.ggml.token_type_count";
    public static final String TOKENIZER_SCORES = "tokenizer.ggml.scores";
    public static final String TOKENIZER_MERGES = "tokenizer.ggml.merges";
    public static final String TOKENIZER_BOS_ID = "tokenizer.ggml.bos_token_id";
    public static final String TOKENIZER_EOS_ID = "tokenizer.ggml.eos_token_id";
    public static final String TOKENIZER_EOT_ID = "tokenizer.ggml.eot_token_id";
    public static final String TOKENIZER_EOM_ID = "tokenizer.ggml.eom_token_id";
    public static final String TOKENIZER_UNK_ID = "tokenizer.ggml.unknown_token_id";
    /** Spelled as in gguf-py. */
    public static final String TOKENIZER_SEP_ID = "tokenizer.ggml.seperator_token_id";
    public static final String TOKENIZER_PAD_ID = "tokenizer.ggml.padding_token_id";
    public static final String TOKENIZER_CLS_ID = "tokenizer.ggml.cls_token_id";
    public static final String TOKENIZER_MASK_ID = "tokenizer.ggml.mask_token_id";
    public static final String TOKENIZER_ADD_BOS = "tokenizer.ggml.add_bos_token";
    public static final String TOKENIZER_ADD_EOS = "tokenizer.ggml.add_eos_token";
    public static final String TOKENIZER_ADD_SEP = "tokenizer.ggml.add_sep_token";
    public static final String TOKENIZER_ADD_PREFIX = "tokenizer.ggml.add_space_prefix";
    public static final String TOKENIZER_REMOVE_EXTRA_WS = "tokenizer.ggml.remove_extra_whitespaces";
    public static final String TOKENIZER_PRECOMPILED_CHARSMAP = "tokenizer.ggml.precompiled_charsmap";
    public static final String TOKENIZER_HF_JSON = "tokenizer.huggingface.json";
    public static final String TOKENIZER_RWKV = "tokenizer.rwkv.world";
    public static final String TOKENIZER_CHAT_TEMPLATE = "tokenizer.chat_template";
    public static final String TOKENIZER_CHAT_TEMPLATES = "tokenizer.chat_templates";
    public static final String TOKENIZER_FIM_PRE_ID = "tokenizer.ggml.fim_pre_token_id";
    public static final String TOKENIZER_FIM_SUF_ID = "tokenizer.ggml.fim_suf_token_id";
    public static final String TOKENIZER_FIM_MID_ID = "tokenizer.ggml.fim_mid_token_id";
    public static final String TOKENIZER_FIM_PAD_ID = "tokenizer.ggml.fim_pad_token_id";
    public static final String TOKENIZER_FIM_REP_ID = "tokenizer.ggml.fim_rep_token_id";
    public static final String TOKENIZER_FIM_SEP_ID = "tokenizer.ggml.fim_sep_token_id";

    /** {@code tokenizer.chat_template.<name>}: a named extra chat template. */
    public static String chatTemplate(String name) {
        return TOKENIZER_CHAT_TEMPLATE + "." + name;
    }

    // --- Keys.Split
    public static final String SPLIT_LLM_KV_NO = "split.no";
    public static final String SPLIT_LLM_KV_COUNT = "split.count";
    public static final String SPLIT_LLM_KV_TENSORS_COUNT = "split.tensors.count";

    // --- Keys.Adapter
    public static final String ADAPTER_TYPE = "adapter.type";
    public static final String ADAPTER_LORA_ALPHA = "adapter.lora.alpha";
}
