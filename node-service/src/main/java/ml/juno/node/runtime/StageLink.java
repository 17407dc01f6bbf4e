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

    public StageLink(ShardLoad.Pipeline stage, Duration timeout) {
        if (!stage.nodeToNode()) {
            throw new IllegalArgumentException("a stage without its neighbours' addresses sends its rows to the coordinator");
        }
        this.stage = stage;
        this.timeout = stage.forwardTimeoutMillis() > 0 ? Duration.ofMillis(stage.forwardTimeoutMillis()) : timeout;
        this.previous = stage.stage() == 0 ? null : new PeerQueue("stage " + (stage.stage() - 1) + " (" + stage.stages().get(stage.stage() - 1) + ")", "rows");
        int s = stage.stage();
        this.waitName = (stepId, micro) -> "stage " + s + ", step " + stepId + (micro > 0 ? " micro-batch " + micro : "");
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
    }

    /** The stream from stage {@code from}, or this stage's link to it, ended: a wait for its rows fails now. */
    public void ended(int from, String why) {
        if (previous != null && from == stage.stage() - 1) {
            previous.ended(why);
        }
    }

    /** The input rows of micro-batch {@code micro} of step {@code stepId} from the previous stage. */
    Activations take(long stepId, int micro, long stepStartNanos, BooleanSupplier cancelled) {
        return previous.take(stepId, micro, System.nanoTime() + timeout.toNanos(), timeout, stepStartNanos, cancelled, waitName);
    }

    /** Sends the output rows of micro-batch {@code micro} of step {@code stepId} to the next stage; the bytes sent. */
    long send(long stepId, int micro, Activations rows) {
        return next.send(stepId, micro, rows);
    }

    @Override
    public void close() {
        if (next != null) {
            next.close();
        }
    }
}
