package ml.juno.engine.model;

import java.util.List;

/**
 * Output of greedy generation: the generated tokens and, for each step, the top-K logits of the distribution that
 * produced that step's token.
 */
public record GenerationResult(int[] tokens, List<TopLogit[]> topLogits) {
    public GenerationResult {
        tokens = tokens.clone();
        topLogits = List.copyOf(topLogits);
    }
}
