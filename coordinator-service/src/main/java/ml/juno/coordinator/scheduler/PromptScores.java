package ml.juno.coordinator.scheduler;

import java.util.List;
import ml.juno.coordinator.sampling.TokenLogprobs;

/**
 * Log-probabilities of prompt tokens of a sequence that asked for them ({@link GenerationRequest#promptLogprobs()}):
 * entry {@code i} scores prompt token {@code firstToken + i} given the tokens before it. A sequence's scores arrive in
 * order, each prompt token once, from 1 (token 0 has nothing before it) to the prompt's last, before its first token.
 */
public record PromptScores(long sequenceId, int firstToken, List<TokenLogprobs> logprobs) {
    public PromptScores {
        logprobs = List.copyOf(logprobs);
    }
}
