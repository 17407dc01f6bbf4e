package ml.juno.node.runtime;

import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import ml.juno.model.wire.Activations;

/**
 * What one peer sent this node, in arrival order: its partials (a tensor rank) or its output rows (the previous
 * pipeline stage), filled by the peer's inbound stream on a gRPC thread, and the end of that stream. {@link #take}
 * waits for one step's message on the inference thread, bounded by a deadline, by the end of the peer's stream (the
 * peer died or its link broke: the step fails at once with the reason) and by the coordinator cancelling the step;
 * messages left over from a step that failed are skipped.
 */
final class PeerQueue {
    /** How often a wait looks whether the coordinator cancelled the step. */
    static final long CANCEL_CHECK_NANOS = 20_000_000L;

    /** A peer's message for step {@code stepId}, number {@code index} within it. */
    record Message(long stepId, int index, Activations rows) {}

    /** The peer's stream (or this node's link to it) ended, at {@code atNanos}, and why. */
    private record Ended(long atNanos, String why) {}

    private final BlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final String peer; // "rank 1 (host:port)", for messages
    private final String noun; // what the peer sends: "partial", "rows"

    PeerQueue(String peer, String noun) {
        this.peer = peer;
        this.noun = noun;
    }

    String peer() {
        return peer;
    }

    /**
     * Names a wait for error messages, built only when one is thrown: the per-token waits (45 a token under tensor
     * parallelism) allocate nothing.
     */
    @FunctionalInterface
    interface Wait {
        String name(long stepId, int index);
    }

    void offer(long stepId, int index, Activations rows) {
        queue.offer(new Message(stepId, index, java.util.Objects.requireNonNull(rows, "rows"))); // null: nothing yet, to the waits
    }

    void ended(String why) {
        queue.offer(new Ended(System.nanoTime(), why));
    }

    /**
     * {@link #take} without waiting: the message, or null while there is none; the same failures, except that a later
     * message is left in the queue for its own wait: the one wanted may still come another way (shared memory), and it
     * is the wait's deadline that reports it missing.
     */
    Activations poll(long stepId, int index, long stepStartNanos, Wait what) {
        Object o;
        while ((o = queue.peek()) != null) {
            if (o instanceof Message m && (m.stepId() > stepId || (m.stepId() == stepId && m.index() > index))) {
                return null;
            }
            queue.poll(); // only the inference thread takes: the head is still o
            Activations rows = accept(o, stepId, index, stepStartNanos, what);
            if (rows != null) {
                return rows;
            }
        }
        return null;
    }

    /**
     * The peer's message {@code index} of step {@code stepId}.
     *
     * @param what names the wait in errors ("all-reduce 3 of step 7"); called only when one is thrown
     * @throws IllegalStateException the deadline passed, the peer's stream ended during the step, the step was
     *                               cancelled, or the peer sent something else
     */
    Activations take(long stepId, int index, long deadlineNanos, Duration timeout, long stepStartNanos, BooleanSupplier cancelled,
                     Wait what) {
        while (true) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                throw new IllegalStateException(what.name(stepId, index) + ": no " + noun + " from " + peer + " within " + timeout);
            }
            if (cancelled.getAsBoolean()) {
                throw new IllegalStateException(what.name(stepId, index) + ": the coordinator cancelled the step");
            }
            Object o;
            try {
                o = queue.poll(Math.min(left, CANCEL_CHECK_NANOS), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + what.name(stepId, index));
            }
            Activations rows = o == null ? null : accept(o, stepId, index, stepStartNanos, what);
            if (rows != null) {
                return rows;
            }
        }
    }

    /** What queue entry {@code o} means for the wait: its rows, null to skip it, or the failure it reports. */
    private Activations accept(Object o, long stepId, int index, long stepStartNanos, Wait what) {
        if (o instanceof Ended e) {
            if (e.atNanos() - stepStartNanos < 0) {
                return null; // a link that ended before this step: it has reconnected since, or the coordinator knows
            }
            throw new IllegalStateException(what.name(stepId, index) + ": " + e.why());
        }
        Message m = (Message) o;
        if (m.stepId() < stepId) {
            return null; // left over from a step that failed
        }
        if (m.stepId() != stepId || m.index() != index) {
            throw new IllegalStateException(what.name(stepId, index) + ": " + peer + " sent " + noun + " " + m.index() + " of step " + m.stepId());
        }
        return m.rows();
    }
}
