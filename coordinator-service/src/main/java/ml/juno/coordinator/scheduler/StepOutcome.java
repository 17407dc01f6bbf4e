package ml.juno.coordinator.scheduler;

import java.util.List;

/**
 * What {@code update} produced: prompt scores (echo with logprobs, delivered before their sequence's tokens), new
 * tokens in plan order, then sequences that ended (including ones cancelled since the last update).
 */
public record StepOutcome(List<PromptScores> scores, List<SampledToken> tokens, List<FinishedSequence> finished) {
    public StepOutcome {
        scores = List.copyOf(scores);
        tokens = List.copyOf(tokens);
        finished = List.copyOf(finished);
    }

    /** An outcome without prompt scores. */
    public StepOutcome(List<SampledToken> tokens, List<FinishedSequence> finished) {
        this(List.of(), tokens, finished);
    }
}
