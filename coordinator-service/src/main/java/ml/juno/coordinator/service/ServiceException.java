package ml.juno.coordinator.service;

/** A failure the HTTP edge reports to the client with a status of its own; see the subclasses. */
public abstract sealed class ServiceException extends RuntimeException
        permits InvalidRequestException, UnknownModelException, EngineBusyException, EngineNotReadyException,
        NotSupportedException {

    protected ServiceException(String message) {
        super(message, null, false, false);
    }
}
