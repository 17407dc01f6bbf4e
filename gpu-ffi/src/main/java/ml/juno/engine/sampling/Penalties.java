package ml.juno.engine.sampling;

/** Stage 1: repetition / frequency / presence penalties over the recent-token window. */
public final class Penalties {
    private Penalties() {
    }

    /**
     * Applies the penalties to {@code logits[0..vocab)} for every distinct token in {@code window[0..n)} (any order:
     * only occurrences count).
     *
     * @param counts scratch of vocab size, all zero on entry and left all zero on return
     */
    public static void apply(float[] logits, int[] window, int n, float repeat, float frequency, float presence, int[] counts) {
        for (int i = 0; i < n; i++) {
            counts[window[i]]++;
        }
        for (int i = 0; i < n; i++) {
            int token = window[i];
            int c = counts[token];
            if (c == 0) {
                continue; // already applied for this token
            }
            counts[token] = 0;
            float l = logits[token];
            l = l > 0f ? l / repeat : l * repeat;
            logits[token] = l - c * frequency - presence;
        }
    }
}
