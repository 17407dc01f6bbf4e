package ml.juno.node.runtime;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.wire.Activations;

/**
 * A pipeline stage's links to its neighbours, no coordinator in between: the stage's output rows of each step go to the
 * next stage on one long-lived stream ({@link RankReduce.Outbound}, the same links and {@code Reduce} stream tensor ranks
 * use), and its input rows come from the previous stage's stream into one queue ({@link PeerQueue}). The first stage
 * takes token ids from the coordinator; the last sends nothing on and answers the coordinator (tokens, or logits).
 *
 * <p>Stages on the same host can pass their rows through shared memory instead ({@link StageRing}: the receiving
 * stage's inbox, which the sending stage maps when it finds it; a node's stages use it unless it is turned off, {@link
 * StageRing#wanted()}): a copy and one futex wake-up, where a loopback gRPC message wakes an event loop on each side
 * and then the waiting thread. The gRPC stream stays open (a hello opens it) and
 * carries what does not fit the ring; the waiting stage takes a step's rows from whichever path brought them.
 *
 * <p>Every wait is bounded like an all-reduce's: the forward timeout, the end of the previous stage's stream, the
 * coordinator cancelling the step. {@link #take} and {@link #send} run on the inference thread; {@link #receive} and
 * {@link #ended} on gRPC threads.
 */
public final class StageLink implements AutoCloseable {
    private final ShardLoad.Pipeline stage;
    private final Duration timeout;
    private final PeerQueue previous; // null for the first stage
    private final PeerQueue.Wait waitName;
    private RankReduce.Outbound next;  // null for the last stage
    /** This stage's shared-memory inbox (the previous stage writes into it when it runs on this host), or null. */
    private final StageRing inbox;
    /** Whether this stage looks for the next stage's inbox on this host. */
    private final boolean shm;
    private StageRing nextRing;        // the next stage's inbox mapped here, or null (not on this host, not yet, or gone)
    private long nextLook;             // when to look for (or re-check) it next
    private long shmMessages;
    /** How long a wait for rows spins before it sleeps on the inbox's futex (rows usually come a stage's compute later). */
    private static final long SPIN_NANOS = 30_000L;

    /** A stage whose rows all go by gRPC. */
    public StageLink(ShardLoad.Pipeline stage, Duration timeout) {
        this(stage, timeout, 0);
    }

    /**
     * @param shmPayload the largest rows message (bytes) stages on this host pass through shared memory; 0: none, every
     *                   message by gRPC ({@link StageRing})
     */
    public StageLink(ShardLoad.Pipeline stage, Duration timeout, long shmPayload) {
        if (!stage.nodeToNode()) {
            throw new IllegalArgumentException("a stage without its neighbours' addresses sends its rows to the coordinator");
        }
        this.stage = stage;
        this.timeout = stage.forwardTimeoutMillis() > 0 ? Duration.ofMillis(stage.forwardTimeoutMillis()) : timeout;
        this.previous = stage.stage() == 0 ? null : new PeerQueue("stage " + (stage.stage() - 1) + " (" + stage.stages().get(stage.stage() - 1) + ")", "rows");
        int s = stage.stage();
        this.waitName = (stepId, micro) -> "stage " + s + ", step " + stepId + (micro > 0 ? " micro-batch " + micro : "");
        this.shm = shmPayload > 0 && StageRing.enabled();
        StageRing box = null;
        if (shm && previous != null) {
            try {
                box = StageRing.create(stage.group(), s, shmPayload);
            } catch (java.io.IOException | RuntimeException e) {
                box = null; // gRPC only
            }
        }
        this.inbox = box;
    }

    /** Opens the link to the next stage (it connects, and reconnects, when rows are first sent on it). */
    public StageLink connect(RankReduce.Network network) {
        if (stage.stage() < stage.stages().size() - 1) {
            this.next = network.openStage(stage, this);
        }
        return this;
    }

    public ShardLoad.Pipeline stage() {
        return stage;
    }

    public boolean first() {
        return previous == null;
    }

    public boolean last() {
        return stage.stage() == stage.stages().size() - 1;
    }

    /**
     * The previous stage's rows (a gRPC thread).
     *
     * @throws IllegalArgumentException rows of another group, or not from the stage before this one
     */
    public void receive(RankReduce.Partial p) {
        if (p.group() != stage.group()) {
            throw new IllegalArgumentException("rows of group " + p.group() + ", but this node serves stage " + stage.stage()
                    + " of pipeline " + stage.group());
        }
        if (previous == null || p.fromRank() != stage.stage() - 1) {
            throw new IllegalArgumentException("rows from stage " + p.fromRank() + ", but this node is stage " + stage.stage()
                    + " of " + stage.stages().size());
        }
        previous.offer(p.stepId(), p.index(), p.partial());
        wakeReader();
    }

    /** Wakes this stage's inference thread if it sleeps on the shared-memory inbox: something came by gRPC. */
    private void wakeReader() {
        if (inbox != null) {
            try {
                inbox.ring();
            } catch (IllegalStateException closed) {
                // the shard was unloaded: nobody waits
            }
        }
    }

    /** The stream from stage {@code from}, or this stage's link to it, ended: a wait for its rows fails now. */
    public void ended(int from, String why) {
        if (previous != null && from == stage.stage() - 1) {
            previous.ended(why);
            wakeReader();
        }
    }

    /** The input rows of micro-batch {@code micro} of step {@code stepId} from the previous stage. */
    Activations take(long stepId, int micro, long stepStartNanos, BooleanSupplier cancelled) {
        long start = System.nanoTime();
        long deadline = start + timeout.toNanos();
        if (inbox == null) {
            return previous.take(stepId, micro, deadline, timeout, stepStartNanos, cancelled, waitName);
        }
        long nextCancelCheck = start;
        while (true) {
            int seen = inbox.bell(); // before looking: whatever arrives after it rings the bell again
            Activations rows = inbox.poll(stepId, micro);
            if (rows == null) {
                rows = previous.poll(stepId, micro, stepStartNanos, waitName);
            }
            if (rows != null) {
                return rows;
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                throw new IllegalStateException(waitName.name(stepId, micro) + ": no rows from " + previous.peer() + " within " + timeout);
            }
            if (now - nextCancelCheck >= 0) {
                nextCancelCheck = now + PeerQueue.CANCEL_CHECK_NANOS;
                if (cancelled.getAsBoolean()) {
                    throw new IllegalStateException(waitName.name(stepId, micro) + ": the coordinator cancelled the step");
                }
            }
            if (now - start >= SPIN_NANOS) {
                inbox.sleep(seen, Math.min(deadline - now, nextCancelCheck - now));
            } // else spin: no Thread.onSpinWait(), under KVM a PAUSE loop makes the host deschedule this vCPU
        }
    }

    /**
     * Sends the output rows of micro-batch {@code micro} of step {@code stepId} to the next stage, through its
     * shared-memory inbox when it has one on this host and the rows fit; the bytes sent.
     */
    long send(long stepId, int micro, Activations rows) {
        StageRing ring = shm ? nextRing(System.nanoTime()) : null;
        if (ring != null) {
            if (ring.offer(stepId, micro, rows)) {
                shmMessages++;
                return rows.data().length;
            }
            if (!ring.open()) {
                nextLook = System.nanoTime(); // the next stage unloaded it (or reloads): look for its new one next time
            }
        }
        return next.send(stepId, micro, rows);
    }

    /** The next stage's inbox on this host, mapped now if it appeared, dropped if it went; null: by gRPC. */
    private StageRing nextRing(long now) {
        if (now - nextLook < 0) {
            return nextRing;
        }
        nextLook = now + RankReduce.SHM_RECHECK_NANOS; // a restarted next stage has a new inbox
        StageRing r = nextRing;
        if (r != null && r.current()) {
            return r;
        }
        if (r != null) {
            r.close();
        }
        r = StageRing.attach(stage.group(), stage.stage() + 1);
        nextRing = r;
        if (r != null) {
            // the gRPC stream carries no rows now, but stays open: its end tells the next stage this one is gone
            next.send(RankReduce.HELLO_STEP, 0, new Activations(ml.juno.model.wire.ActivationDtype.FLOAT32, java.nio.ByteOrder.LITTLE_ENDIAN, 1, 1, new byte[4]));
        }
        return r;
    }

    /** Rows this stage put into the next stage's shared-memory inbox (the rest went by gRPC). */
    public long sharedMemoryMessages() {
        return shmMessages;
    }

    /** Whether this stage has a shared-memory inbox for the stage before it. */
    public boolean sharedMemory() {
        return inbox != null;
    }

    @Override
    public void close() {
        if (next != null) {
            next.close();
        }
        if (nextRing != null) {
            nextRing.close();
            nextRing = null;
        }
        if (inbox != null) {
            inbox.close();
        }
    }
}
