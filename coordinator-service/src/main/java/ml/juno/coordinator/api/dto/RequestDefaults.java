package ml.juno.coordinator.api.dto;

/**
 * What a request gets for the fields it leaves out, where the server was started with {@code --max-tokens},
 * {@code --temperature}, {@code --top-k} or {@code --top-p}; a null field keeps OpenAI's default.
 *
 * @param maxTokens   tokens generated at most (chat: else until the context is full; completions: else 16)
 * @param temperature else 1
 * @param topK        else 0 (off)
 * @param topP        else 1
 */
public record RequestDefaults(Integer maxTokens, Double temperature, Integer topK, Double topP) {

    /** OpenAI's defaults everywhere. */
    public static final RequestDefaults OPENAI = new RequestDefaults(null, null, null, null);

    public RequestDefaults {
        if (maxTokens != null && maxTokens < 1 || temperature != null && !(temperature >= 0 && temperature <= 2)
                || topK != null && topK < 0 || topP != null && !(topP >= 0 && topP <= 1)) {
            throw new IllegalArgumentException("request defaults out of range: max-tokens >= 1, temperature 0..2, top-k >= 0, top-p 0..1");
        }
    }
}
