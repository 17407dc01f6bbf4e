package ml.juno.coordinator.service;

/** The request names a model this server does not serve. */
public final class UnknownModelException extends ServiceException {
    public UnknownModelException(String model) {
        super("The model '" + model + "' does not exist");
    }
}
