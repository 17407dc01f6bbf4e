package ml.juno.engine.sampling;

/**
 * The settings of one sequence's draws as the sampler chain reads them (the coordinator's {@code SamplingParams}
 * without the grammar, which stays with the coordinator): temperature (0 = greedy), truncation, penalties and logit
 * bias. Made once per sequence; a node rebuilds it from the step plan.
 *
 * @param temperature logits are divided by it before truncation; 0 = greedy
 * @param topK        keep the k most likely tokens; 0 disables
 * @param topP        nucleus; 1 disables
 * @param minP        drop tokens below minP times the best one's probability; 0 disables
 * @param repeat      repetition penalty; 1 disables
 * @param frequency   subtracted once per occurrence in the window
 * @param presence    subtracted once if the token occurs in the window
 * @param biasIds     token ids with an additive bias (distinct, >= 0)
 * @param biasValues  their bias, never NaN
 */
public record DrawParams(float temperature, int topK, float topP, float minP, float repeat, float frequency, float presence,
                         int[] biasIds, float[] biasValues) {

    public DrawParams {
        if (!(temperature >= 0f) || !Float.isFinite(temperature)) {
            throw new IllegalArgumentException("temperature must be finite and >= 0, got " + temperature);
        }
        if (topK < 0 || !(topP > 0f && topP <= 1f) || !(minP >= 0f && minP <= 1f)) {
            throw new IllegalArgumentException("truncation out of range: top-k " + topK + ", top-p " + topP + ", min-p " + minP);
        }
        if (!(repeat > 0f) || !Float.isFinite(repeat) || !Float.isFinite(frequency) || !Float.isFinite(presence)) {
            throw new IllegalArgumentException("penalties out of range: repeat " + repeat + ", frequency " + frequency + ", presence " + presence);
        }
        if (biasIds.length != biasValues.length) {
            throw new IllegalArgumentException("logit bias has " + biasIds.length + " ids but " + biasValues.length + " values");
        }
        for (int i = 0; i < biasIds.length; i++) {
            if (biasIds[i] < 0 || Float.isNaN(biasValues[i])) {
                throw new IllegalArgumentException("logit bias entry " + i + " is token " + biasIds[i] + " = " + biasValues[i]);
            }
        }
    }

    public boolean isGreedy() {
        return temperature == 0f;
    }

    /** True when the penalties can change a logit (given a non-empty window). */
    public boolean penalized() {
        return repeat != 1f || frequency != 0f || presence != 0f;
    }
}
