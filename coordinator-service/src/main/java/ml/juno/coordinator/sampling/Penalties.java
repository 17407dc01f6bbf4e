package ml.juno.coordinator.sampling;

/** Stage 1: repetition / frequency / presence penalties over the recent-token window. */
public final class Penalties {
    private Penalties() {
    }

    /**
     * Applies {@code p} to {@code logits[0..vocab)} for every distinct token in {@code window}.
     *
     * @param counts scratch of vocab size, all zero on entry and left all zero on return
     */
    public static void apply(float[] logits, TokenWindow window, RepetitionPenalties p, int[] counts) {
        int n = window.size();
        for (int i = 0; i < n; i++) {
            counts[window.get(i)]++;
        }
        for (int i = 0; i < n; i++) {
            int token = window.get(i);
            int c = counts[token];
            if (c == 0) {
                continue; // already applied for this token
            }
            counts[token] = 0;
            float l = logits[token];
            l = l > 0f ? l / p.repeat() : l * p.repeat();
            logits[token] = l - c * p.frequency() - p.presence();
        }
    }
}
