package ml.juno.coordinator.engine;

/**
 * Incremental detokenizer of one sequence: turns each generated token into the text it adds, holding back
 * bytes of an incomplete UTF-8 character until the next token completes it. Provided by the tokenizer per
 * request; used on the generation loop's thread only.
 */
public interface PieceDecoder {
    /** Text added by {@code tokenId}; may be empty. */
    String decode(int tokenId);

    /** Whatever is still held back at the end of the sequence (replacement characters for broken bytes). */
    String flush();
}
