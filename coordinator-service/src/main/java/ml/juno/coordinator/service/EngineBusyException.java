package ml.juno.coordinator.service;

import java.time.Duration;

/** The engine's queue is full; the client should come back after {@link #retryAfter()}. */
public final class EngineBusyException extends ServiceException {
    private final Duration retryAfter;

    public EngineBusyException(Duration retryAfter, String reason) {
        super(reason);
        this.retryAfter = retryAfter;
    }

    public Duration retryAfter() {
        return retryAfter;
    }
}
