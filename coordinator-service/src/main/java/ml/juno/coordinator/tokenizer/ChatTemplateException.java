package ml.juno.coordinator.tokenizer;

/** A chat template failed to render: a syntax error, or the template itself refused the conversation. */
public final class ChatTemplateException extends RuntimeException {
    public ChatTemplateException(String message) {
        super(message);
    }

    public ChatTemplateException(String message, Throwable cause) {
        super(message, cause);
    }
}
