package ml.juno.engine.sampling;

/**
 * One row drawn where its logits are: the token (or {@link #NO_TOKEN} and why the draw failed) and, when asked, its
 * log-probability and the best alternatives', from the log-softmax of the unmodified logits.
 *
 * @param token       the drawn token, or {@link #NO_TOKEN}
 * @param error       why the draw failed, "" when it did not
 * @param logprob     the token's log-probability; NaN when none were asked
 * @param topIds      the best alternatives, most likely first; empty when none were asked
 * @param topLogprobs their log-probabilities
 */
public record DrawResult(int token, String error, float logprob, int[] topIds, float[] topLogprobs) {
    public static final int NO_TOKEN = -1;
    private static final int[] NO_IDS = new int[0];
    private static final float[] NO_LPS = new float[0];

    public DrawResult {
        if (topIds.length != topLogprobs.length) {
            throw new IllegalArgumentException("topIds and topLogprobs differ in length");
        }
    }

    public static DrawResult failed(String why) {
        return new DrawResult(NO_TOKEN, why, Float.NaN, NO_IDS, NO_LPS);
    }

    /** A token without log-probabilities. */
    public static DrawResult of(int token) {
        return new DrawResult(token, "", Float.NaN, NO_IDS, NO_LPS);
    }

    public boolean hasLogprobs() {
        return !Float.isNaN(logprob);
    }
}
