package ml.juno.engine.gguf;

import java.util.Map;

/**
 * Checks that a parsed file's values can be right, before anything sizes buffers from them: every special-token id
 * ({@code tokenizer.ggml.*_token_id}) lies inside the vocabulary ({@code tokenizer.ggml.tokens}) or is llama.cpp's
 * "none" (-1, or 0xFFFFFFFF as UINT32), and each
 * architecture's hyper-parameters ({@code <arch>.context_length}, {@code .block_count}, head counts, lengths,
 * {@code .rope.*}, epsilons…) lie in sane bounds, with the grouped-query heads dividing the query heads. A value
 * outside is a {@link GgufFormatException} naming the key, the value and the bound. The bounds are far beyond any
 * published model (a context of 16M tokens, 1M-wide embeddings), so they refuse only what is corrupted or hostile.
 */
public final class GgufSanity {

    /** Inclusive bounds of an integer key (by its name after {@code <arch>.}). */
    private record IntBound(long min, long max) {
    }

    /** Bounds of a float key: {@code min < v <= max} when {@code positive}, else {@code min <= v <= max}. */
    private record FloatBound(double min, double max, boolean positive) {
    }

    public static final long MAX_CONTEXT = 1L << 24;

    private static final Map<String, IntBound> INTS = Map.ofEntries(
            Map.entry(GgufKeys.CONTEXT_LENGTH, new IntBound(1, MAX_CONTEXT)),
            Map.entry(GgufKeys.EMBEDDING_LENGTH, new IntBound(1, 1L << 20)),
            Map.entry(GgufKeys.BLOCK_COUNT, new IntBound(1, 4096)),
            Map.entry(GgufKeys.LEADING_DENSE_BLOCK_COUNT, new IntBound(0, 4096)),
            Map.entry(GgufKeys.FEED_FORWARD_LENGTH, new IntBound(0, 1L << 24)),
            Map.entry(GgufKeys.EXPERT_FEED_FORWARD_LENGTH, new IntBound(0, 1L << 24)),
            Map.entry(GgufKeys.EXPERT_SHARED_FEED_FORWARD_LENGTH, new IntBound(0, 1L << 24)),
            Map.entry(GgufKeys.EXPERT_COUNT, new IntBound(0, 1L << 16)),
            Map.entry(GgufKeys.EXPERT_USED_COUNT, new IntBound(0, 1L << 16)),
            Map.entry(GgufKeys.EXPERT_SHARED_COUNT, new IntBound(0, 1L << 16)),
            Map.entry(GgufKeys.VOCAB_SIZE, new IntBound(1, 1L << 24)),
            Map.entry(GgufKeys.ATTENTION_HEAD_COUNT, new IntBound(0, 1L << 14)),
            Map.entry(GgufKeys.ATTENTION_HEAD_COUNT_KV, new IntBound(0, 1L << 14)),
            Map.entry(GgufKeys.ATTENTION_KEY_LENGTH, new IntBound(1, 1L << 14)),
            Map.entry(GgufKeys.ATTENTION_VALUE_LENGTH, new IntBound(1, 1L << 14)),
            Map.entry(GgufKeys.ATTENTION_SLIDING_WINDOW, new IntBound(0, MAX_CONTEXT)),
            Map.entry(GgufKeys.ROPE_DIMENSION_COUNT, new IntBound(0, 1L << 14)),
            Map.entry(GgufKeys.ROPE_SCALING_ORIG_CTX_LEN, new IntBound(0, MAX_CONTEXT)));

    private static final Map<String, FloatBound> FLOATS = Map.ofEntries(
            Map.entry(GgufKeys.ROPE_FREQ_BASE, new FloatBound(0, 1e15, true)),
            Map.entry(GgufKeys.ROPE_FREQ_BASE_SWA, new FloatBound(0, 1e15, true)),
            Map.entry(GgufKeys.ROPE_SCALING_FACTOR, new FloatBound(0, 1e6, true)),
            Map.entry(GgufKeys.ROPE_SCALE_LINEAR, new FloatBound(0, 1e6, true)),
            Map.entry(GgufKeys.ROPE_SCALING_ATTN_FACTOR, new FloatBound(0, 1e6, true)),
            Map.entry(GgufKeys.ATTENTION_LAYERNORM_RMS_EPS, new FloatBound(0, 1, true)),
            Map.entry(GgufKeys.ATTENTION_LAYERNORM_EPS, new FloatBound(0, 1, true)),
            Map.entry(GgufKeys.ATTENTION_SCALE, new FloatBound(0, 1e6, true)),
            Map.entry(GgufKeys.LOGIT_SCALE, new FloatBound(-1e6, 1e6, false)),
            Map.entry(GgufKeys.EMBEDDING_SCALE, new FloatBound(-1e6, 1e6, false)),
            Map.entry(GgufKeys.RESIDUAL_SCALE, new FloatBound(-1e6, 1e6, false)),
            Map.entry(GgufKeys.ATTN_LOGIT_SOFTCAPPING, new FloatBound(0, 1e6, false)),
            Map.entry(GgufKeys.FINAL_LOGIT_SOFTCAPPING, new FloatBound(0, 1e6, false)));

    private GgufSanity() {
    }

    /** @throws GgufFormatException naming the first key whose value cannot be right */
    public static void check(GgufMetadata md) throws GgufFormatException {
        try {
            checkSpecialTokens(md);
            String arch = md.has(GgufKeys.GENERAL_ARCHITECTURE) && md.type(GgufKeys.GENERAL_ARCHITECTURE) == GgufValueType.STRING
                    ? md.getString(GgufKeys.GENERAL_ARCHITECTURE) : null;
            if (arch != null) {
                checkHyperParameters(md, arch);
            }
        } catch (IllegalArgumentException e) { // a value of the wrong type, or a UINT64 past Long.MAX_VALUE; the message names the key
            throw new GgufFormatException("metadata", e.getMessage());
        }
    }

    static void checkSpecialTokens(GgufMetadata md) throws GgufFormatException {
        if (!md.has(GgufKeys.TOKENIZER_LIST) || md.type(GgufKeys.TOKENIZER_LIST) != GgufValueType.ARRAY) {
            return;
        }
        long vocab = md.getArray(GgufKeys.TOKENIZER_LIST).size();
        for (String key : md.keys()) {
            if (!key.startsWith("tokenizer.ggml.") || !key.endsWith("_token_id")) {
                continue;
            }
            long id = integer(md, key);
            if (id == -1 || (id == 0xFFFF_FFFFL && md.type(key) == GgufValueType.UINT32)) {
                continue; // "no such token", as llama.cpp writes it (LLAMA_TOKEN_NULL)
            }
            if (id < 0 || id >= vocab) {
                throw new GgufFormatException(key, "token id " + id + " is outside the vocabulary [0, " + vocab + ") of "
                        + GgufKeys.TOKENIZER_LIST);
            }
        }
    }

    static void checkHyperParameters(GgufMetadata md, String arch) throws GgufFormatException {
        String prefix = arch + ".";
        for (String key : md.keys()) {
            if (!key.startsWith(prefix)) {
                continue;
            }
            String name = key.substring(prefix.length());
            IntBound ib = INTS.get(name);
            if (ib != null) {
                checkInts(md, key, ib);
            }
            FloatBound fb = FLOATS.get(name);
            if (fb != null) {
                double v = md.getDouble(key);
                boolean ok = Double.isFinite(v) && v <= fb.max() && (fb.positive() ? v > fb.min() : v >= fb.min());
                if (!ok) {
                    throw new GgufFormatException(key, "value " + v + " is outside " + (fb.positive() ? "(" : "[") + fb.min() + ", "
                            + fb.max() + "]");
                }
            }
        }
        String heads = prefix + GgufKeys.ATTENTION_HEAD_COUNT;
        String kvHeads = prefix + GgufKeys.ATTENTION_HEAD_COUNT_KV;
        if (scalar(md, heads) && scalar(md, kvHeads)) {
            long h = md.getLong(heads);
            long kv = md.getLong(kvHeads);
            if (h > 0 && (kv == 0 || kv > h || h % kv != 0)) {
                throw new GgufFormatException(kvHeads, "value " + kv + " does not divide " + heads + " = " + h);
            }
        }
        String experts = prefix + GgufKeys.EXPERT_COUNT;
        String used = prefix + GgufKeys.EXPERT_USED_COUNT;
        if (scalar(md, experts) && scalar(md, used) && md.getLong(used) > md.getLong(experts)) {
            throw new GgufFormatException(used, "value " + md.getLong(used) + " exceeds " + experts + " = " + md.getLong(experts));
        }
    }

    private static boolean scalar(GgufMetadata md, String key) {
        return md.has(key) && md.type(key).isInteger();
    }

    private static void checkInts(GgufMetadata md, String key, IntBound b) throws GgufFormatException {
        GgufValueType t = md.type(key);
        if (t == GgufValueType.ARRAY) {
            GgufArray a = md.getArray(key);
            if (!a.elementType().isInteger()) {
                throw new GgufFormatException(key, "an array of " + a.elementType() + ", not of integers");
            }
            for (int i = 0; i < a.size(); i++) {
                long v = a.longAt(i);
                if (v < Math.min(b.min(), 0) || v > b.max()) {
                    throw new GgufFormatException(key + "[" + i + "]", "value " + v + " is outside [" + Math.min(b.min(), 0) + ", " + b.max() + "]");
                }
            }
            return;
        }
        long v = integer(md, key);
        if (v < b.min() || v > b.max()) {
            throw new GgufFormatException(key, "value " + v + " is outside [" + b.min() + ", " + b.max() + "]");
        }
    }

    private static long integer(GgufMetadata md, String key) throws GgufFormatException {
        GgufValueType t = md.type(key);
        if (!t.isInteger()) {
            throw new GgufFormatException(key, "is " + t + ", not an integer");
        }
        try {
            return md.getLong(key);
        } catch (IllegalArgumentException e) { // a UINT64 past Long.MAX_VALUE
            throw new GgufFormatException(key, e.getMessage());
        }
    }
}
