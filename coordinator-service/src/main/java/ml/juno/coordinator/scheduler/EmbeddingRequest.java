package ml.juno.coordinator.scheduler;

import ml.juno.engine.embedding.Pooling;

/**
 * One input to embed: its tokens run through the model as prefill only (no sampling, no generated token), every row
 * the pooling uses returns its final hidden state, and the sequence finishes with its pooled, normalised vector once
 * the last token is computed; its KV blocks are released then. It never reads or fills the prefix cache: a prefix
 * served from the cache would skip the rows mean pooling needs.
 *
 * @param promptTokens the input's tokens; not empty
 * @param pooling      how the hidden states become one vector (not {@link Pooling#NONE})
 * @param priority     lower runs first, as for generation
 */
public record EmbeddingRequest(int[] promptTokens, Pooling pooling, int priority) {
    public EmbeddingRequest {
        if (promptTokens == null || promptTokens.length == 0) {
            throw new IllegalArgumentException("an input to embed needs at least one token");
        }
        if (pooling == null || pooling == Pooling.NONE) {
            throw new IllegalArgumentException("embedding requests need a pooling that gives one vector, got " + pooling);
        }
        promptTokens = promptTokens.clone();
    }

    @Override
    public int[] promptTokens() {
        return promptTokens.clone();
    }
}
