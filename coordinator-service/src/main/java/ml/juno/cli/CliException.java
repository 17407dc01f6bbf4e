package ml.juno.cli;

/** A user-facing failure: printed as one line ("juno: …") with exit code 1, never as a stack trace. */
public final class CliException extends RuntimeException {
    public CliException(String message) {
        super(message);
    }
}
