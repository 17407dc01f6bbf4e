package ml.juno.coordinator.service;

/** The model is still loading, failed to load, or the engine is shutting down. */
public final class EngineNotReadyException extends ServiceException {
    public EngineNotReadyException(String message) {
        super(message);
    }
}
