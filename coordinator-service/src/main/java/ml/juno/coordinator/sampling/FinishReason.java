package ml.juno.coordinator.sampling;

/** Why a sequence stopped, with the OpenAI wire name. */
public enum FinishReason {
    /** An end-of-generation token or a stop string. */
    STOP("stop"),
    /** max tokens reached (or the context is full). */
    LENGTH("length"),
    /** The client went away or asked to stop. */
    CANCELLED("cancelled"),
    /** The step that should have produced the next token failed. */
    ERROR("error");

    private final String wireName;

    FinishReason(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}
