/**
 * Tokenizers for GGUF vocabularies (SentencePiece BPE and byte-level BPE), special-token handling,
 * streaming detokenization, stop tokens and chat-template rendering. Plain Java, no CDI: built with
 * {@code new} or {@link ml.juno.coordinator.tokenizer.Tokenizer#fromGguf}.
 *
 * <p>Depends on {@code ml.juno.engine.gguf} (metadata only) and Jinjava (chat templates).
 */
package ml.juno.coordinator.tokenizer;
