package ml.juno.coordinator.tokenizer;

/** The values of {@code tokenizer.ggml.token_type} (gguf-py {@code TokenType}). */
public enum TokenType {
    UNDEFINED(0), NORMAL(1), UNKNOWN(2), CONTROL(3), USER_DEFINED(4), UNUSED(5), BYTE(6);

    public final int id;

    TokenType(int id) {
        this.id = id;
    }

    /** Unknown ids read as {@link #UNDEFINED}, as llama.cpp does. */
    public static TokenType fromId(int id) {
        return id >= 0 && id < values().length ? values()[id] : UNDEFINED;
    }
}
