package ml.juno.coordinator.sampling;

/**
 * Which candidates survive before the draw: top-k, then top-p (nucleus), then min-p.
 *
 * @param topK keep the k most likely tokens; 0 disables
 * @param topP keep the smallest set of most likely tokens whose probability sum reaches p; 1 disables
 * @param minP drop tokens whose probability is below minP times the most likely one's; 0 disables
 */
public record Truncation(int topK, float topP, float minP) {

    /** No truncation at all: every token can be drawn. */
    public static final Truncation NONE = new Truncation(0, 1f, 0f);

    public Truncation {
        if (topK < 0) {
            throw new IllegalArgumentException("topK must be >= 0 (0 disables), got " + topK);
        }
        if (!(topP > 0f && topP <= 1f)) {
            throw new IllegalArgumentException("topP must be in (0, 1], got " + topP);
        }
        if (!(minP >= 0f && minP <= 1f)) {
            throw new IllegalArgumentException("minP must be in [0, 1], got " + minP);
        }
    }
}
