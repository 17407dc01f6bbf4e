package ml.juno.engine.gguf;

import java.util.Objects;

/**
 * A model's hyper-parameters, read from GGUF metadata in one place ({@link #from(GgufMetadata)}) that knows the
 * {@code <arch>.*} key names. Optional keys get llama.cpp's defaults (llama-model.cpp {@code load_hparams}); the
 * required ones ({@code general.architecture}, {@code <arch>.context_length}, {@code .embedding_length},
 * {@code .block_count}) throw {@link IllegalArgumentException} naming the key when absent.
 *
 * @param arch      {@code general.architecture}, e.g. {@code llama}
 * @param sizes     vocabulary, context, widths and depth
 * @param attention heads, sliding window and norm epsilons
 * @param rope      rotary embedding settings
 * @param experts   mixture-of-experts routing (count 0 for dense models)
 */
public record ModelHyperParams(String arch, Sizes sizes, Attention attention, Rope rope, Experts experts) {

    /**
     * @param vocabSize         {@code <arch>.vocab_size}, else the length of {@code tokenizer.ggml.tokens}, else 0
     * @param contextLength     {@code <arch>.context_length} (training context)
     * @param embeddingLength   {@code <arch>.embedding_length} (n_embd)
     * @param blockCount        {@code <arch>.block_count} (layers)
     * @param feedForwardLength {@code <arch>.feed_forward_length}; 0 when absent; the largest entry when per-layer
     */
    public record Sizes(int vocabSize, int contextLength, int embeddingLength, int blockCount, int feedForwardLength) {
        public Sizes {
            if (vocabSize < 0 || contextLength <= 0 || embeddingLength <= 0 || blockCount <= 0 || feedForwardLength < 0) {
                throw new IllegalArgumentException("invalid sizes: vocab " + vocabSize + ", context " + contextLength
                        + ", embedding " + embeddingLength + ", blocks " + blockCount + ", ffn " + feedForwardLength);
            }
        }
    }

    /**
     * @param headCount   {@code attention.head_count} (n_head); the largest entry when per-layer
     * @param headCountKv {@code attention.head_count_kv}; defaults to {@code headCount} (no GQA)
     * @param keyLength   {@code attention.key_length}; defaults to {@code embeddingLength / headCount}
     * @param valueLength {@code attention.value_length}; defaults to {@code embeddingLength / headCount}
     */
    public record Heads(int headCount, int headCountKv, int keyLength, int valueLength) {
        public Heads {
            if (headCount < 0 || headCountKv < 0 || keyLength < 0 || valueLength < 0) {
                throw new IllegalArgumentException("negative head parameter: " + headCount + ", " + headCountKv + ", "
                        + keyLength + ", " + valueLength);
            }
            if (headCountKv > 0 && headCount % headCountKv != 0) {
                throw new IllegalArgumentException("head_count " + headCount + " is not a multiple of head_count_kv " + headCountKv);
            }
        }
    }

    /**
     * @param heads         head counts and sizes
     * @param slidingWindow {@code attention.sliding_window}; 0 when absent (full attention)
     * @param rmsEps        {@code attention.layer_norm_rms_epsilon}; 1e-5 when absent
     * @param layerNormEps  {@code attention.layer_norm_epsilon}; 1e-5 when absent
     */
    public record Attention(Heads heads, int slidingWindow, float rmsEps, float layerNormEps) {
        public Attention {
            Objects.requireNonNull(heads, "heads");
            if (slidingWindow < 0 || !(rmsEps >= 0) || !(layerNormEps >= 0)) {
                throw new IllegalArgumentException("invalid attention: window " + slidingWindow + ", eps " + rmsEps + "/" + layerNormEps);
            }
        }
    }

    /**
     * @param type                  {@code rope.scaling.type}: none, linear, yarn, longrope; llama.cpp's default is
     *                              linear (with factor 1: no scaling)
     * @param factor                {@code rope.scaling.factor}; 1 when absent or 0
     * @param originalContextLength {@code rope.scaling.original_context_length}; defaults to the context length
     */
    public record RopeScaling(String type, float factor, int originalContextLength) {
        public RopeScaling {
            Objects.requireNonNull(type, "type");
            if (!(factor > 0) || originalContextLength < 0) {
                throw new IllegalArgumentException("invalid rope scaling: factor " + factor + ", original context " + originalContextLength);
            }
        }
    }

    /**
     * @param dimensionCount {@code rope.dimension_count}; defaults to the key length (rotate whole heads)
     * @param freqBase       {@code rope.freq_base}; 10000 when absent
     * @param scaling        context-extension settings
     */
    public record Rope(int dimensionCount, float freqBase, RopeScaling scaling) {
        public Rope {
            Objects.requireNonNull(scaling, "scaling");
            if (dimensionCount < 0 || !(freqBase > 0)) {
                throw new IllegalArgumentException("invalid rope: dims " + dimensionCount + ", base " + freqBase);
            }
        }
    }

    /**
     * @param count             {@code expert_count}; 0 for dense models
     * @param usedCount         {@code expert_used_count} (top-k); 0 for dense models
     * @param feedForwardLength {@code expert_feed_forward_length}; 0 when absent
     */
    public record Experts(int count, int usedCount, int feedForwardLength) {
        public Experts {
            if (count < 0 || usedCount < 0 || usedCount > count || feedForwardLength < 0) {
                throw new IllegalArgumentException("invalid experts: " + usedCount + " used of " + count + ", ffn " + feedForwardLength);
            }
        }
    }

    public ModelHyperParams {
        Objects.requireNonNull(arch, "arch");
        Objects.requireNonNull(sizes, "sizes");
        Objects.requireNonNull(attention, "attention");
        Objects.requireNonNull(rope, "rope");
        Objects.requireNonNull(experts, "experts");
    }

    /** Reads the hyper-parameters of {@code general.architecture} from {@code md}. */
    public static ModelHyperParams from(GgufMetadata md) {
        String arch = md.getString(GgufKeys.GENERAL_ARCHITECTURE);
        Reader r = new Reader(md, arch);
        int ctx = r.required(GgufKeys.CONTEXT_LENGTH);
        int embd = r.required(GgufKeys.EMBEDDING_LENGTH);
        int blocks = r.required(GgufKeys.BLOCK_COUNT);
        int vocab = md.has(GgufKeys.arch(arch, GgufKeys.VOCAB_SIZE)) ? r.optional(GgufKeys.VOCAB_SIZE, 0)
                : md.has(GgufKeys.TOKENIZER_LIST) ? md.getArray(GgufKeys.TOKENIZER_LIST).size() : 0;
        Sizes sizes = new Sizes(vocab, ctx, embd, blocks, r.optionalMax(GgufKeys.FEED_FORWARD_LENGTH, 0));

        int nHead = r.optionalMax(GgufKeys.ATTENTION_HEAD_COUNT, 0);
        int nHeadKv = r.optionalMax(GgufKeys.ATTENTION_HEAD_COUNT_KV, nHead);
        int headDim = nHead > 0 ? embd / nHead : 0;
        int keyLength = r.optional(GgufKeys.ATTENTION_KEY_LENGTH, headDim);
        Heads heads = new Heads(nHead, nHeadKv, keyLength, r.optional(GgufKeys.ATTENTION_VALUE_LENGTH, headDim));
        Attention attention = new Attention(heads, r.optional(GgufKeys.ATTENTION_SLIDING_WINDOW, 0),
                r.optionalFloat(GgufKeys.ATTENTION_LAYERNORM_RMS_EPS, 1e-5f), r.optionalFloat(GgufKeys.ATTENTION_LAYERNORM_EPS, 1e-5f));

        float factor = r.optionalFloat(GgufKeys.ROPE_SCALING_FACTOR, 0f);
        RopeScaling scaling = new RopeScaling(
                md.getString(GgufKeys.arch(arch, GgufKeys.ROPE_SCALING_TYPE), "linear"),
                factor == 0f ? 1f : factor,
                r.optional(GgufKeys.ROPE_SCALING_ORIG_CTX_LEN, ctx));
        Rope rope = new Rope(r.optional(GgufKeys.ROPE_DIMENSION_COUNT, keyLength),
                r.optionalFloat(GgufKeys.ROPE_FREQ_BASE, 10000f), scaling);

        Experts experts = new Experts(r.optional(GgufKeys.EXPERT_COUNT, 0), r.optional(GgufKeys.EXPERT_USED_COUNT, 0),
                r.optional(GgufKeys.EXPERT_FEED_FORWARD_LENGTH, 0));
        return new ModelHyperParams(arch, sizes, attention, rope, experts);
    }

    public int contextLength() {
        return sizes.contextLength();
    }

    public int embeddingLength() {
        return sizes.embeddingLength();
    }

    public int blockCount() {
        return sizes.blockCount();
    }

    public int feedForwardLength() {
        return sizes.feedForwardLength();
    }

    public int vocabSize() {
        return sizes.vocabSize();
    }

    public int headCount() {
        return attention.heads().headCount();
    }

    public int headCountKv() {
        return attention.heads().headCountKv();
    }

    /** Per-head size of queries and keys. */
    public int keyLength() {
        return attention.heads().keyLength();
    }

    public int valueLength() {
        return attention.heads().valueLength();
    }

    public float rmsEps() {
        return attention.rmsEps();
    }

    /** Reads {@code <arch>.<suffix>} keys with range checks; errors name the full key. */
    private record Reader(GgufMetadata md, String arch) {

        int required(String suffix) {
            String key = GgufKeys.arch(arch, suffix);
            if (!md.has(key)) {
                throw new IllegalArgumentException("missing key " + key + " (required for architecture " + arch + ")");
            }
            return nonNegative(key, md.getLong(key));
        }

        int optional(String suffix, int def) {
            String key = GgufKeys.arch(arch, suffix);
            return md.has(key) ? nonNegative(key, md.getLong(key)) : def;
        }

        /** A scalar, or a per-layer array of which the largest entry is taken. */
        int optionalMax(String suffix, int def) {
            String key = GgufKeys.arch(arch, suffix);
            if (!md.has(key)) {
                return def;
            }
            if (md.type(key) != GgufValueType.ARRAY) {
                return nonNegative(key, md.getLong(key));
            }
            long max = 0;
            for (long v : md.getLongArray(key)) {
                max = Math.max(max, nonNegative(key, v));
            }
            return (int) max;
        }

        float optionalFloat(String suffix, float def) {
            String key = GgufKeys.arch(arch, suffix);
            return md.has(key) ? md.getFloat(key) : def;
        }

        private static int nonNegative(String key, long v) {
            if (v < 0 || v > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("key " + key + " = " + v + " is out of range");
            }
            return (int) v;
        }
    }
}
