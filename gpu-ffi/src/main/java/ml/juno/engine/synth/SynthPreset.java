package ml.juno.engine.synth;

import java.util.List;
import java.util.Locale;

/**
 * The shape of a llama-architecture model: what {@code convert_hf_to_gguf} would write as {@code llama.*} keys.
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
 */
public record SynthPreset(String name, int vocabSize, int dim, int layers, int heads, int kvHeads, int ffn,
                          int contextLength, float ropeBase, float rmsEps) {

    public static final SynthPreset TINYLLAMA_1_1B =
            new SynthPreset("tinyllama-1.1b", 32000, 2048, 22, 32, 4, 5632, 2048, 10000f, 1e-5f);
    public static final SynthPreset LLAMA_7B =
            new SynthPreset("llama-7b", 32000, 4096, 32, 32, 32, 11008, 4096, 10000f, 1e-5f);

    /** The presets {@link #named(String)} knows. */
    public static final List<SynthPreset> PRESETS = List.of(TINYLLAMA_1_1B, LLAMA_7B);

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
        return new SynthPreset(name, vocab, dim, layers, heads, kvHeads, ffn, contextLength, ropeBase, rmsEps);
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
        return String.format(Locale.ROOT, "%s (vocab %d, dim %d, %d layers, %d heads, %d kv heads, ffn %d)",
                name, vocabSize, dim, layers, heads, kvHeads, ffn);
    }
}
