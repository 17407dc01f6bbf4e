package ml.juno.coordinator.service;

/**
 * The request is well formed but cannot be served as asked (prompt longer than the context, token id outside
 * the vocabulary, a chat the template cannot render…).
 *
 * @see #param() the request field at fault, in the wire's spelling ({@code max_tokens}), or null
 */
public final class InvalidRequestException extends ServiceException {
    private final String param;

    public InvalidRequestException(String param, String message) {
        super(message);
        this.param = param;
    }

    public String param() {
        return param;
    }
}
