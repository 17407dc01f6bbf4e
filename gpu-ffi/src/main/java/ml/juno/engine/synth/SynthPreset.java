package ml.juno.engine.synth;

import java.util.List;
import java.util.Locale;

/**
 * The shape of a llama-architecture model: what {@code convert_hf_to_gguf} would write as {@code llama.*} keys; with
 * {@code moe} experts, a {@code qwen3moe} model (per-head Q/K norms, a softmax router, SwiGLU experts in 3-D tensors).
 *
 * @param name          preset name, also written as {@code general.name}
 * @param vocabSize     tokens (replaced by the vocabulary file's size when one is given)
 * @param dim           embedding length
 * @param layers        transformer blocks
 * @param heads         attention heads
 * @param kvHeads       key/value heads (grouped-query attention when fewer than {@code heads})
 * @param ffn           feed-forward length
 * @param contextLength training context
 * @param ropeBase      rope frequency base
 * @param rmsEps        RMS norm epsilon
 * @param moe           the mixture of experts ({@link Moe#NONE}: a dense llama model)
 */
public record SynthPreset(String name, int vocabSize, int dim, int layers, int heads, int kvHeads, int ffn,
                          int contextLength, float ropeBase, float rmsEps, Moe moe) {

    /** Experts per layer, experts each token uses, and each expert's FFN width ({@code 0, 0, 0}: dense). */
    public record Moe(int experts, int used, int expertFfn) {
        public static final Moe NONE = new Moe(0, 0, 0);

        public Moe {
            if (experts < 0 || used < 0 || expertFfn < 0 || used > experts || (experts > 0) != (used > 0 && expertFfn > 0)) {
                throw new IllegalArgumentException("bad MoE shape: " + used + " of " + experts + " experts of width " + expertFfn);
            }
        }

        public boolean present() {
            return experts > 0;
        }
    }

    /** A dense llama preset. */
    public SynthPreset(String name, int vocabSize, int dim, int layers, int heads, int kvHeads, int ffn,
                       int contextLength, float ropeBase, float rmsEps) {
        this(name, vocabSize, dim, layers, heads, kvHeads, ffn, contextLength, ropeBase, rmsEps, Moe.NONE);
    }

    public static final SynthPreset TINYLLAMA_1_1B =
            new SynthPreset("tinyllama-1.1b", 32000, 2048, 22, 32, 4, 5632, 2048, 10000f, 1e-5f);
    public static final SynthPreset LLAMA_7B =
            new SynthPreset("llama-7b", 32000, 4096, 32, 32, 32, 11008, 4096, 10000f, 1e-5f);

    /**
     * Qwen3-30B-A3B's expert layout (128 experts, 8 used, expert width 768, embedding 2048, head dim 128, 4 KV heads)
     * in 10 layers and a 32000-token vocabulary: about 3.8 GB at Q4_K_M, 97% of it routed experts: a model to measure
     * expert streaming on.
     */
    public static final SynthPreset QWEN3MOE_MINI = new SynthPreset("qwen3moe-mini", 32000, 2048, 10, 16, 4, 6144, 4096,
            1000000f, 1e-6f, new Moe(128, 8, 768));

    /** The presets {@link #named(String)} knows. */
    public static final List<SynthPreset> PRESETS = List.of(TINYLLAMA_1_1B, LLAMA_7B, QWEN3MOE_MINI);

    public SynthPreset {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("preset needs a name");
        }
        if (vocabSize < 1 || dim < 1 || layers < 1 || heads < 1 || kvHeads < 1 || ffn < 1 || contextLength < 1) {
            throw new IllegalArgumentException("preset " + name + ": sizes must be positive");
        }
        if (dim % heads != 0 || heads % kvHeads != 0) {
            throw new IllegalArgumentException("preset " + name + ": dim must divide into heads and heads into kv heads");
        }
        if (moe == null) {
            throw new IllegalArgumentException("preset " + name + ": moe is Moe.NONE for a dense model, never null");
        }
        if (!(ropeBase > 0) || !(rmsEps > 0)) {
            throw new IllegalArgumentException("preset " + name + ": rope base and eps must be positive");
        }
    }

    public int headDim() {
        return dim / heads;
    }

    public int kvDim() {
        return kvHeads * headDim();
    }

    public SynthPreset withVocabSize(int vocab) {
        return new SynthPreset(name, vocab, dim, layers, heads, kvHeads, ffn, contextLength, ropeBase, rmsEps, moe);
    }

    /** {@code general.architecture}: {@code qwen3moe} with experts, else {@code llama}. */
    public String architecture() {
        return moe.present() ? "qwen3moe" : "llama";
    }

    /**
     * The preset called {@code name} (case-insensitive).
     *
     * @throws IllegalArgumentException naming the known presets
     */
    public static SynthPreset named(String name) {
        for (SynthPreset p : PRESETS) {
            if (p.name().equalsIgnoreCase(name.trim())) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown preset '" + name + "' (known: "
                + String.join(", ", PRESETS.stream().map(SynthPreset::name).toList()) + ")");
    }

    @Override
    public String toString() {
        String base = String.format(Locale.ROOT, "%s (vocab %d, dim %d, %d layers, %d heads, %d kv heads, ffn %d",
                name, vocabSize, dim, layers, heads, kvHeads, ffn);
        return base + (moe.present() ? String.format(Locale.ROOT, ", %d of %d experts of width %d)", moe.used(),
                moe.experts(), moe.expertFfn()) : ")");
    }
}
