package ml.juno.coordinator.tokenizer;

import java.util.List;
import java.util.Objects;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;

/**
 * Everything a tokenizer needs from a model file, as plain data.
 *
 * @param kind     which algorithm ({@code tokenizer.ggml.model}), pre-tokenizer and model name
 * @param tokens   token texts, scores and types, indexed by token id
 * @param merges   byte-level BPE merges ("left right", rank = index); empty for SentencePiece
 * @param special  special token ids
 * @param flags    add-BOS / add-EOS / add-space-prefix behaviour
 */
public record Vocabulary(Kind kind, TokenTable tokens, List<String> merges, SpecialIds special, Flags flags) {

    /** SentencePiece BPE ({@code llama}) or byte-level BPE ({@code gpt2}). */
    public enum Model {
        SPM, BPE;

        static Model fromGguf(String name) {
            return switch (name) {
                case "llama" -> SPM;
                case "gpt2" -> BPE;
                default -> throw new IllegalArgumentException("unsupported tokenizer model tokenizer.ggml.model='"
                        + name + "' (supported: llama, gpt2)");
            };
        }
    }

    /**
     * @param model     the tokenizer algorithm
     * @param pre       {@code tokenizer.ggml.pre} ("default" when absent)
     * @param modelName {@code general.name} (llama.cpp keys a few token attributes off it)
     */
    public record Kind(Model model, String pre, String modelName) {
        public Kind {
            Objects.requireNonNull(model, "model");
            pre = pre == null || pre.isEmpty() ? "default" : pre;
            modelName = modelName == null ? "" : modelName;
        }
    }

    /** Token texts with their scores and types; all three have one entry per token id. */
    public record TokenTable(List<String> texts, float[] scores, int[] types) {
        public TokenTable {
            texts = List.copyOf(texts);
            if (texts.isEmpty()) {
                throw new IllegalArgumentException("vocabulary has no tokens");
            }
            if (scores == null) {
                scores = new float[texts.size()];
            }
            if (types == null) {
                types = new int[texts.size()];
                java.util.Arrays.fill(types, TokenType.NORMAL.id);
            }
            if (scores.length < texts.size() || types.length < texts.size()) {
                throw new IllegalArgumentException("scores (" + scores.length + ") or token types ("
                        + types.length + ") shorter than the token list (" + texts.size() + ")");
            }
        }

        public int size() {
            return texts.size();
        }
    }

    /** Special token ids; -1 when the model has none. */
    public record SpecialIds(int bos, int eos, int unk, int eot, int pad) {
        public static final int NONE = -1;
    }

    /** Whether encode adds BOS / EOS, and whether SentencePiece prepends a space to the text. */
    public record Flags(boolean addBos, boolean addEos, boolean addSpacePrefix) {
    }

    public Vocabulary {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(tokens, "tokens");
        merges = merges == null ? List.of() : List.copyOf(merges);
        Objects.requireNonNull(special, "special");
        Objects.requireNonNull(flags, "flags");
        int n = tokens.size();
        for (int id : new int[] {special.bos(), special.eos(), special.unk(), special.eot(), special.pad()}) {
            if (id < -1 || id >= n) {
                throw new IllegalArgumentException("special token id " + id + " outside vocabulary of " + n);
            }
        }
        if (flags.addBos() && special.bos() < 0) {
            throw new IllegalArgumentException("add_bos_token is true, but there is no BOS token");
        }
        if (flags.addEos() && special.eos() < 0) {
            throw new IllegalArgumentException("add_eos_token is true, but there is no EOS token");
        }
        if (kind.model() == Model.BPE && merges.isEmpty()) {
            throw new IllegalArgumentException("byte-level BPE vocabulary without tokenizer.ggml.merges");
        }
    }

    public int size() {
        return tokens.size();
    }

    /**
     * Reads the {@code tokenizer.ggml.*} keys, with llama.cpp's defaults: SentencePiece vocabularies
     * default to BOS=1, EOS=2, UNK=0, add BOS, prepend a space; byte-level BPE to BOS=EOS=11 and no BOS
     * except for the Llama-3 family of pre-tokenizers. A special id outside the vocabulary (such as
     * UINT32 -1) is ignored, as llama.cpp does.
     *
     * @throws IllegalArgumentException for a missing token list, an unsupported tokenizer model or
     *     pre-tokenizer, or inconsistent arrays
     */
    public static Vocabulary fromGguf(GgufMetadata md) {
        if (!md.has(GgufKeys.TOKENIZER_MODEL)) {
            throw new IllegalArgumentException("model file has no tokenizer (key " + GgufKeys.TOKENIZER_MODEL + " missing)");
        }
        Model model = Model.fromGguf(md.getString(GgufKeys.TOKENIZER_MODEL));
        String pre = model == Model.SPM ? "default" : md.getString(GgufKeys.TOKENIZER_PRE, "default");
        if (model == Model.BPE) {
            PreTokenizer.forName(pre); // refuse unknown pre-tokenizers before reading the rest
        }
        if (!md.has(GgufKeys.TOKENIZER_LIST)) {
            throw new IllegalArgumentException("cannot find tokenizer vocab (key " + GgufKeys.TOKENIZER_LIST + ")");
        }
        List<String> texts = md.getStringArray(GgufKeys.TOKENIZER_LIST);
        int n = texts.size();
        float[] scores = md.has(GgufKeys.TOKENIZER_SCORES) ? md.getFloatArray(GgufKeys.TOKENIZER_SCORES) : null;
        int[] types = md.has(GgufKeys.TOKENIZER_TOKEN_TYPE) ? md.getIntArray(GgufKeys.TOKENIZER_TOKEN_TYPE) : null;
        List<String> merges = model == Model.BPE
                ? (md.has(GgufKeys.TOKENIZER_MERGES) ? md.getStringArray(GgufKeys.TOKENIZER_MERGES) : List.of())
                : List.of();

        boolean spm = model == Model.SPM;
        boolean chatglm = pre.equals("glm4") || pre.equals("chatglm-bpe");
        int bos = special(md, GgufKeys.TOKENIZER_BOS_ID, spm ? 1 : chatglm ? -1 : 11, n);
        int eos = special(md, GgufKeys.TOKENIZER_EOS_ID, spm ? 2 : 11, n);
        int unk = special(md, GgufKeys.TOKENIZER_UNK_ID, spm ? 0 : -1, n);
        int eot = special(md, GgufKeys.TOKENIZER_EOT_ID, -1, n);
        int pad = special(md, GgufKeys.TOKENIZER_PAD_ID, -1, n);

        boolean defaultBos = spm || switch (pre) {
            case "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2",
                 "jina-v5-nano", "tekken", "chameleon" -> true;
            default -> false;
        };
        Flags flags = new Flags(
                md.getBool(GgufKeys.TOKENIZER_ADD_BOS, defaultBos),
                md.getBool(GgufKeys.TOKENIZER_ADD_EOS, false),
                md.getBool(GgufKeys.TOKENIZER_ADD_PREFIX, spm));
        return new Vocabulary(new Kind(model, pre, md.getString(GgufKeys.GENERAL_NAME, "")),
                new TokenTable(texts, scores, types), merges, new SpecialIds(bos, eos, unk, eot, pad), flags);
    }

    private static int special(GgufMetadata md, String key, int def, int n) {
        int d = def >= n ? -1 : def;
        if (!md.has(key)) {
            return d;
        }
        long id = md.getLong(key);
        return id >= 0 && id < n ? (int) id : d;
    }
}
