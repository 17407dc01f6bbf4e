package ml.juno.engine.embedding;

import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufMetadata;

/**
 * How a sequence's final hidden states become one embedding, as GGUF's {@code <arch>.pooling_type} declares it
 * (llama.cpp's {@code llama_pooling_type} numbers): {@code none} keeps one vector per token, {@code mean} averages
 * every token's, {@code cls} takes the first token's, {@code last} the last token's. {@code rank} (rerankers, a
 * classification head) is not supported. Every pooled vector is then L2-normalised, as llama.cpp's embedding tools
 * and server do by default.
 *
 * <p>A file without the key (every generative model) gets {@link #MEAN}: llama.cpp falls back to {@code none} there,
 * which gives per-token vectors and which its OpenAI endpoint refuses; averaging the tokens is what a caller of
 * {@code /v1/embeddings} on a generative model can use.
 */
public enum Pooling {
    NONE(0), MEAN(1), CLS(2), LAST(3);

    /** The pooling of a file without {@code <arch>.pooling_type}. */
    public static final Pooling DEFAULT = MEAN;

    private final int ggufValue;

    Pooling(int ggufValue) {
        this.ggufValue = ggufValue;
    }

    /** llama.cpp's number for it, as stored in GGUF. */
    public int ggufValue() {
        return ggufValue;
    }

    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The one for llama.cpp's number {@code value}; rank (4) and unknown numbers are refused, naming them. */
    public static Pooling ofGguf(long value) {
        for (Pooling p : values()) {
            if (p.ggufValue == value) {
                return p;
            }
        }
        throw new IllegalArgumentException(GgufKeys.POOLING_TYPE + " " + value
                + (value == 4 ? " (rank: a reranker's classification head)" : "")
                + " is not supported; Juno pools with none (0), mean (1), cls (2) or last (3)");
    }

    /** What {@code file} declares in {@code <arch>.pooling_type}, else {@link #DEFAULT}. */
    public static Pooling of(GgufFile file) {
        GgufMetadata m = file.metadata();
        String key = m.getString(GgufKeys.GENERAL_ARCHITECTURE) + "." + GgufKeys.POOLING_TYPE;
        return m.has(key) ? ofGguf(m.getLong(key)) : DEFAULT;
    }

    /** A sequence of {@code length} tokens wants the final hidden state of position {@code position}. */
    public boolean uses(int position, int length) {
        return switch (this) {
            case NONE, MEAN -> true;
            case CLS -> position == 0;
            case LAST -> position == length - 1;
        };
    }
}
