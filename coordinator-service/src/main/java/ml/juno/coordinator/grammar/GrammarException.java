package ml.juno.coordinator.grammar;

/** A grammar or JSON schema that cannot be compiled; the message names the problem (and where it is). */
public final class GrammarException extends IllegalArgumentException {
    public GrammarException(String message) {
        super(message);
    }
}
