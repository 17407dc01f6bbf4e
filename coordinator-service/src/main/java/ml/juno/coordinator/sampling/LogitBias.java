package ml.juno.coordinator.sampling;

import java.util.Arrays;
import java.util.Map;

/**
 * Additive per-token bias (OpenAI {@code logit_bias}); {@code -Infinity} bans a token.
 * Kept as two parallel arrays so applying it neither boxes nor allocates.
 *
 * @param tokenIds token ids, each >= 0 and distinct
 * @param values   bias added to the matching token's logit, never NaN
 */
public record LogitBias(int[] tokenIds, float[] values) {

    /** No bias. */
    public static final LogitBias NONE = new LogitBias(new int[0], new float[0]);

    public LogitBias {
        if (tokenIds.length != values.length) {
            throw new IllegalArgumentException("logit bias has " + tokenIds.length + " ids but "
                    + values.length + " values");
        }
        tokenIds = tokenIds.clone();
        values = values.clone();
        int[] sorted = tokenIds.clone();
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] < 0) {
                throw new IllegalArgumentException("logit bias token id must be >= 0, got " + sorted[i]);
            }
            if (i > 0 && sorted[i] == sorted[i - 1]) {
                throw new IllegalArgumentException("logit bias lists token " + sorted[i] + " twice");
            }
        }
        for (float v : values) {
            if (Float.isNaN(v)) {
                throw new IllegalArgumentException("logit bias value is NaN");
            }
        }
    }

    /** Builds a bias from a token → bias map (the shape of the OpenAI request field). */
    public static LogitBias of(Map<Integer, Float> bias) {
        int[] ids = new int[bias.size()];
        float[] vals = new float[bias.size()];
        int i = 0;
        for (var e : bias.entrySet()) {
            ids[i] = e.getKey();
            vals[i++] = e.getValue();
        }
        return new LogitBias(ids, vals);
    }

    public int size() {
        return tokenIds.length;
    }

    /** Largest token id mentioned, or -1 when empty. */
    public int maxTokenId() {
        int max = -1;
        for (int id : tokenIds) {
            max = Math.max(max, id);
        }
        return max;
    }

    /** Adds the bias to {@code logits[0..vocab)} in place. */
    public void addTo(float[] logits) {
        for (int i = 0; i < tokenIds.length; i++) {
            logits[tokenIds[i]] += values[i];
        }
    }

    @Override
    public int[] tokenIds() {
        return tokenIds.clone();
    }

    @Override
    public float[] values() {
        return values.clone();
    }
}
