package ml.juno.coordinator.sampling;

/**
 * Penalties over the last {@code window} tokens of the sequence (prompt included, as llama.cpp does).
 * For a token seen {@code c > 0} times in the window: the logit is divided by {@code repeat} when positive
 * and multiplied by it when negative (llama.cpp / CTRL), then {@code c * frequency + presence} is
 * subtracted (OpenAI).
 *
 * @param repeat    repetition penalty, 1 disables; must be > 0
 * @param frequency subtracted once per occurrence; 0 disables
 * @param presence  subtracted once if the token occurs at all; 0 disables
 * @param window    how many recent tokens are considered; 0 disables all penalties
 */
public record RepetitionPenalties(float repeat, float frequency, float presence, int window) {

    /** Penalties switched off. */
    public static final RepetitionPenalties NONE = new RepetitionPenalties(1f, 0f, 0f, 0);

    public RepetitionPenalties {
        if (!(repeat > 0f) || !Float.isFinite(repeat)) {
            throw new IllegalArgumentException("repetition penalty must be finite and > 0, got " + repeat);
        }
        if (!Float.isFinite(frequency) || !Float.isFinite(presence)) {
            throw new IllegalArgumentException("frequency/presence penalties must be finite, got "
                    + frequency + "/" + presence);
        }
        if (window < 0) {
            throw new IllegalArgumentException("penalty window must be >= 0, got " + window);
        }
    }

    /** True when applying these penalties can change a logit. */
    public boolean active() {
        return window > 0 && (repeat != 1f || frequency != 0f || presence != 0f);
    }
}
