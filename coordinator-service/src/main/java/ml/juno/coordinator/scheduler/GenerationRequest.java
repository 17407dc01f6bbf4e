package ml.juno.coordinator.scheduler;

import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;

/**
 * One sequence to generate.
 *
 * @param promptTokens the prompt, already tokenized; not empty
 * @param sampling     sampler settings
 * @param stop         when to stop (token-level parts: stop ids, min/max tokens; stop strings are matched
 *                     on text by the caller)
 * @param priority     lower runs first (as vLLM); equal priorities run in arrival order
 * @param logprobs     -1: none; otherwise the chosen token's log-probability plus this many alternatives (0..20)
 * @param adapter      the named LoRA adapter the sequence is computed with (0: none); part of its prefix-cache keys
 * @param promptLogprobs whether the prompt's tokens are scored too ({@link PromptScores}, for echo with logprobs,
 *                     {@code logprobs} alternatives each); such a sequence computes its prompt without the prefix cache
 */
public record GenerationRequest(int[] promptTokens, SamplingParams sampling, StopCondition stop, int priority,
                                int logprobs, int adapter, boolean promptLogprobs) {

    /** A request that does not score its prompt. */
    public GenerationRequest(int[] promptTokens, SamplingParams sampling, StopCondition stop, int priority,
                             int logprobs, int adapter) {
        this(promptTokens, sampling, stop, priority, logprobs, adapter, false);
    }

    /** A request without a named adapter. */
    public GenerationRequest(int[] promptTokens, SamplingParams sampling, StopCondition stop, int priority, int logprobs) {
        this(promptTokens, sampling, stop, priority, logprobs, 0);
    }

    public GenerationRequest {
        if (adapter < 0) {
            throw new IllegalArgumentException("negative LoRA adapter id " + adapter);
        }
        if (promptTokens == null || promptTokens.length == 0) {
            throw new IllegalArgumentException("prompt must have at least one token");
        }
        if (sampling == null || stop == null) {
            throw new IllegalArgumentException("sampling and stop are required");
        }
        if (logprobs < -1 || logprobs > ml.juno.coordinator.sampling.Sampler.MAX_TOP_LOGPROBS) {
            throw new IllegalArgumentException("logprobs must be -1 (off) or in [0, 20], got " + logprobs);
        }
        if (promptLogprobs && logprobs < 0) {
            throw new IllegalArgumentException("prompt log-probabilities need logprobs >= 0");
        }
        promptTokens = promptTokens.clone();
    }

    /** Default priority 0, no log-probabilities. */
    public static GenerationRequest of(int[] promptTokens, SamplingParams sampling, StopCondition stop) {
        return new GenerationRequest(promptTokens, sampling, stop, 0, -1);
    }

    @Override
    public int[] promptTokens() {
        return promptTokens.clone();
    }

    int promptLength() {
        return promptTokens.length;
    }

    int promptToken(int i) {
        return promptTokens[i];
    }
}
