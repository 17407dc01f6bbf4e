package ml.juno.coordinator.scheduler;

import java.util.List;

/**
 * What {@code update} produced: new tokens in plan order, then sequences that ended (including ones
 * cancelled since the last update).
 */
public record StepOutcome(List<SampledToken> tokens, List<FinishedSequence> finished) {
    public StepOutcome {
        tokens = List.copyOf(tokens);
        finished = List.copyOf(finished);
    }
}
