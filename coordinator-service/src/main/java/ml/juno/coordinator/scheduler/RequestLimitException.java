package ml.juno.coordinator.scheduler;

/**
 * A request that can never run on this model: {@link Scheduler#submit} is the one place that checks a request against
 * the context length and the vocabulary, and says which part is at fault and by how much, so that an edge (the HTTP
 * API) can name its own field without checking again.
 */
public final class RequestLimitException extends IllegalArgumentException {

    /** What exceeds which limit. */
    public enum Part {
        /** the prompt alone fills the context: {@code value} prompt tokens, {@code limit} the context */
        PROMPT_LENGTH,
        /** the prompt fits, the prompt plus {@code value} max tokens does not: {@code limit} the context */
        MAX_TOKENS,
        /** prompt token {@code value} is outside the vocabulary of {@code limit} */
        PROMPT_TOKEN,
        /** the logit bias names token {@code value}, outside the vocabulary of {@code limit} */
        LOGIT_BIAS_TOKEN,
        /** stop token {@code value} is outside the vocabulary of {@code limit} */
        STOP_TOKEN
    }

    private final Part part;
    private final int value;
    private final int limit;

    RequestLimitException(Part part, int value, int limit, String message) {
        super(message);
        this.part = part;
        this.value = value;
        this.limit = limit;
    }

    public Part part() {
        return part;
    }

    /** The offending number: a token count or a token id. */
    public int value() {
        return value;
    }

    /** The limit it breaks: the context length or the vocabulary size. */
    public int limit() {
        return limit;
    }
}
