package ml.juno.coordinator.scheduler;

import java.time.Duration;

/** Answer to a submission: queued with an id, or rejected because the queue is full. */
public sealed interface SubmitResult {

    /** Queued; the id names the sequence in plans, outcomes and {@code cancel}. */
    record Accepted(long sequenceId) implements SubmitResult {
    }

    /** Not queued; try again after {@code retryAfter} (maps to HTTP 429/503 with Retry-After). */
    record Rejected(Duration retryAfter, String reason) implements SubmitResult {
    }
}
