package ml.juno.coordinator.tokenizer;

import java.util.List;
import java.util.Objects;

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
}
