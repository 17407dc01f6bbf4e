package ml.juno.coordinator.engine;

/**
 * Sees the raw logits of every row that produces a token, before sampling (for diagnostics such as {@code juno
 * generate --top-logits}). Called on the generation loop's thread; must not block or keep the array.
 */
@FunctionalInterface
public interface LogitsObserver {
    /** Logits {@code logits[offset .. offset + vocab)} of sequence {@code sequenceId}'s next token. */
    void onLogits(long sequenceId, float[] logits, int offset, int vocab);
}
