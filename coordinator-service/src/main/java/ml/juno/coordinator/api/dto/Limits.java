package ml.juno.coordinator.api.dto;

/** Request limits that are part of the API's contract. */
public final class Limits {
    /** Choices per request at most. */
    public static final int MAX_N = 16;
    /** Prompts in one completions request at most (a prompt array). */
    public static final int MAX_PROMPTS = 64;
    /**
     * Sequences one request may start at most: prompts times {@code best_of} (or {@code n}); the engine's default queue
     * (64 waiting sequences) takes that many from an idle server.
     */
    public static final int MAX_CHOICES = 64;
    /** OpenAI's default {@code max_tokens} for text completions. */
    public static final int DEFAULT_COMPLETION_TOKENS = 16;

    private Limits() {
    }
}
