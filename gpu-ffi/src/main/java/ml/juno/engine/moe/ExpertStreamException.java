package ml.juno.engine.moe;

/**
 * Streamed expert bytes could not be had as the model file holds them: a short read, an I/O error, or the file changed
 * (size or modification time) under the running engine. The step fails with it (its requests end with this message),
 * and so does every later step of that store: nothing is computed on bytes that may be wrong.
 */
public final class ExpertStreamException extends RuntimeException {
    public ExpertStreamException(String message, Throwable cause) {
        super(message, cause);
    }
}
