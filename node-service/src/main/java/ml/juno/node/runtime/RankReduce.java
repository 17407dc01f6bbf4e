package ml.juno.node.runtime;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.Activations;

/**
 * A tensor-parallel rank's all-reduce with its peers, no coordinator in between: the rank sends its encoded partial to
 * every other rank of its group ({@link Outbound}) and takes theirs from one queue per peer (filled by the inbound
 * streams, {@link #receive}); then every rank sums all partials, its own as decoded from the bytes it sent, in rank
 * order, so the sum is bit-identical on every rank (and, with FLOAT32 on the wire, what one process computes).
 *
 * <p>Every wait is bounded: by the reduce timeout, by the end of a peer's stream (the peer died or its link broke:
 * {@link #ended}, the step fails at once with the reason), and by the coordinator cancelling the step. Partials left
 * over from a step that failed are skipped. {@link #allReduce} runs on the inference thread only; {@link #receive}
 * and {@link #ended} on gRPC threads.
 */
public final class RankReduce implements AutoCloseable {

    /** Sends this rank's partials to the other ranks of its group. */
    public interface Outbound extends AutoCloseable {
        /** Sends {@code partial} of all-reduce {@code index} of step {@code stepId} to every peer; the bytes sent. */
        long send(long stepId, int index, Activations partial);

        @Override
        void close();
    }

    /** Opens the links of a tensor shard to its peers (gRPC in the node; whatever a test likes). */
    public interface Network {
        Outbound open(ShardLoad.Tensor shard, RankReduce reduce);

        /** Opens a pipeline stage's link to the next stage (its rows go there; a broken link is reported to {@code link}). */
        default Outbound openStage(ShardLoad.Pipeline stage, StageLink link) {
            throw new UnsupportedOperationException("this network links no pipeline stages");
        }
    }

    /** A peer's partial of all-reduce {@code index} of step {@code stepId}. */
    public record Partial(long group, int fromRank, long stepId, int index, Activations partial) {}

    private final ShardLoad.Tensor shard;
    private final ActivationCodec codec;
    private final Duration timeout;
    private final PeerQueue[] inbox; // [rank]; null for this rank
    private Outbound outbound;
    private float[] sum = new float[0];
    private float[] part = new float[0];

    public RankReduce(ShardLoad.Tensor shard, ActivationCodec codec, Duration timeout) {
        String problem = shard.peersProblem();
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        this.shard = shard;
        this.codec = codec;
        this.timeout = shard.reduceTimeoutMillis() > 0 ? Duration.ofMillis(shard.reduceTimeoutMillis()) : timeout;
        this.inbox = new PeerQueue[shard.worldSize()];
        for (int r = 0; r < inbox.length; r++) {
            inbox[r] = r == shard.rank() ? null : new PeerQueue("rank " + r + " (" + shard.peers().get(r) + ")", "partial");
        }
    }

    /** Opens the links to the peers; they connect (and reconnect) when a partial is first sent on them. */
    public RankReduce connect(Network network) {
        this.outbound = network.open(shard, this);
        return this;
    }

    public ShardLoad.Tensor shard() {
        return shard;
    }

    /**
     * Takes a peer's partial (a gRPC thread); one that does not belong to this group is refused with the reason.
     *
     * @throws IllegalArgumentException the partial names another group, an unknown rank, or this rank itself
     */
    public void receive(Partial p) {
        if (p.group() != shard.group()) {
            throw new IllegalArgumentException("partial of group " + p.group() + ", but this node serves rank " + shard.rank()
                    + " of group " + shard.group());
        }
        if (p.fromRank() < 0 || p.fromRank() >= inbox.length || p.fromRank() == shard.rank()) {
            throw new IllegalArgumentException("partial from rank " + p.fromRank() + ", but this node is rank " + shard.rank()
                    + " of " + shard.worldSize());
        }
        inbox[p.fromRank()].offer(p.stepId(), p.index(), p.partial());
    }

    /** The stream from peer {@code rank}, or this rank's link to it, ended: a wait for its partial fails now. */
    public void ended(int rank, String why) {
        if (rank >= 0 && rank < inbox.length && rank != shard.rank()) {
            inbox[rank].ended(why);
        }
    }

    /** The address of rank {@code r}, for messages. */
    String peer(int r) {
        return "rank " + r + " (" + shard.peers().get(r) + ")";
    }

    /** What one all-reduce sent, for the step's figures. */
    long allReduce(long stepId, int index, float[] x, int rows, int width, long stepStartNanos, BooleanSupplier cancelled) {
        Activations mine = Activations.encode(codec, x, 0, rows, width);
        long sent = outbound.send(stepId, index, mine);
        int size = rows * width;
        if (sum.length < size) {
            sum = new float[size];
            part = new float[size];
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        for (int r = 0; r < inbox.length; r++) {
            float[] dst = r == 0 ? sum : part;
            if (r == shard.rank()) {
                if (codec.dtype() == ActivationDtype.FLOAT32) {
                    System.arraycopy(x, 0, dst, 0, size); // exact: what the peers decode from our bytes
                } else {
                    mine.decode(dst, 0); // what the peers see of our partial, so every rank sums the same numbers
                }
            } else {
                Activations theirs = inbox[r].take(stepId, index, deadline, timeout, stepStartNanos, cancelled,
                        "all-reduce " + index + " of step " + stepId);
                if (!theirs.hasShape(rows, width)) {
                    throw new IllegalStateException("all-reduce " + index + " of step " + stepId + ": " + peer(r) + " sent a partial of shape ["
                            + theirs.rows() + ", " + theirs.cols() + "], expected [" + rows + ", " + width + "]");
                }
                theirs.decode(dst, 0);
            }
            if (r > 0) {
                for (int k = 0; k < size; k++) {
                    sum[k] += part[k];
                }
            }
        }
        System.arraycopy(sum, 0, x, 0, size);
        return sent;
    }

    @Override
    public void close() {
        if (outbound != null) {
            outbound.close();
        }
    }
}
