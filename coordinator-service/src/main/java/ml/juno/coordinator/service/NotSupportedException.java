package ml.juno.coordinator.service;

/** The request is valid, but this server, as it runs, does not implement what it asks (HTTP 501). */
public final class NotSupportedException extends ServiceException {
    public NotSupportedException(String message) {
        super(message);
    }
}
