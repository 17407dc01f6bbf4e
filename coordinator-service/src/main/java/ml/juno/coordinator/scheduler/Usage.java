package ml.juno.coordinator.scheduler;

/**
 * Token accounting of a finished sequence (OpenAI {@code usage}).
 *
 * @param promptTokens     tokens in the prompt
 * @param completionTokens tokens generated, an end-of-generation token included
 * @param cachedTokens     prompt tokens served from the prefix cache
 */
public record Usage(int promptTokens, int completionTokens, int cachedTokens) {
    public int totalTokens() {
        return promptTokens + completionTokens;
    }
}
