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
        /**
         * Sends {@code partial} of all-reduce {@code index} of step {@code stepId} to the peers whose rank {@code to} marks
         * (null: every peer); the bytes sent.
         */
        long send(long stepId, int index, Activations partial, boolean[] to);

        /** {@link #send(long, int, Activations, boolean[])} to every peer. */
        default long send(long stepId, int index, Activations partial) {
            return send(stepId, index, partial, null);
        }

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
    private final ActivationCodec exact; // FLOAT32 in the wire's byte order: gathered logits
    private final Duration timeout;
    private final PeerQueue[] inbox; // [rank]; null for this rank
    private Outbound outbound;
    private float[] sum = new float[0];
    private float[] part = new float[0];
    /** This rank's partial as encoded for the peers (kept for the next all-reduce: no allocation per step). */
    private byte[] mine = new byte[0];
    /** A peer's partial as received (kept for the next). */
    private final SharedMailbox.Received received = new SharedMailbox.Received();
    /** This rank's shared-memory inbox (peers on this host write into it), or null: every partial goes by gRPC. */
    private final SharedMailbox shmInbox;
    /** [rank]: that peer's inbox mapped here, or null (not on this host, not there yet, or gone). */
    private final SharedMailbox[] shmPeer;
    private final long[] shmNextLook; // [rank]: when to look for (or re-check) the peer's inbox next
    private final boolean[] grpcTo; // scratch: the peers this partial goes to by gRPC
    private long shmPartials;
    /** How often a mapped peer inbox is checked to be still its owner's (a restarted peer has a new one). */
    static final long SHM_RECHECK_NANOS = 50_000_000L;
    /** A partial that stands for nothing: opens the gRPC stream to a peer reached through shared memory. */
    static final long HELLO_STEP = -1;

    public RankReduce(ShardLoad.Tensor shard, ActivationCodec codec, Duration timeout) {
        this(shard, codec, timeout, 0);
    }

    /**
     * @param shmPayload the largest partial (bytes) that peers on this host pass through shared memory; 0: none, every
     *                   partial by gRPC (see {@link SharedMailbox})
     */
    public RankReduce(ShardLoad.Tensor shard, ActivationCodec codec, Duration timeout, long shmPayload) {
        String problem = shard.peersProblem();
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
        SharedMailbox box = null;
        if (shmPayload > 0) {
            try {
                box = SharedMailbox.create(shard.group(), shard.rank(), shard.worldSize(), ml.juno.model.shm.ShmFiles.slotBytes(shmPayload));
            } catch (java.io.IOException | RuntimeException e) {
                box = null; // gRPC only
            }
        }
        this.shmInbox = box;
        this.shmPeer = new SharedMailbox[shard.worldSize()];
        this.shmNextLook = new long[shard.worldSize()];
        this.grpcTo = new boolean[shard.worldSize()];
        this.shard = shard;
        this.codec = codec;
        this.exact = ActivationCodec.of(ActivationDtype.FLOAT32, codec.order());
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
        int length = encode(codec, x, rows, width);
        long sent = send(stepId, index, codec, rows, width, length);
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
                    codec.decode(mine, length, rows, width, dst, 0); // what the peers see of our partial, so every rank sums the same numbers
                }
            } else {
                SharedMailbox.Received theirs = awaitPeer(r, stepId, index, deadline, stepStartNanos, cancelled, ALL_REDUCE);
                if (!theirs.hasShape(rows, width)) {
                    throw new IllegalStateException(ALL_REDUCE.name(stepId, index) + ": " + peer(r) + " sent a partial of shape ["
                            + theirs.rows + ", " + theirs.cols + "], expected [" + rows + ", " + width + "]");
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

    /**
     * The output head's vocabulary slices ({@link ml.juno.engine.model.block.AllReduce#gatherColumns}): this rank's
     * {@code [rows][width]} block at the start of {@code x} goes to every peer in FLOAT32 whatever the wire's type (logits
     * are drawn from; they are not rounded), and the peers' blocks land in their columns, rank {@code r}'s starting where
     * rank {@code r-1}'s end. Numbered and bounded as an all-reduce; what it sent.
     */
    long gather(long stepId, int index, float[] x, int rows, int total, int from, int width, long stepStartNanos,
                BooleanSupplier cancelled) {
        int length = encode(exact, x, rows, width);
        long sent = send(stepId, index, exact, rows, width, length);
        ml.juno.engine.model.block.AllReduce.spreadRows(x, rows, total, from, width);
        long deadline = System.nanoTime() + timeout.toNanos();
        int start = 0;
        for (int r = 0; r < inbox.length; r++) {
            int w;
            if (r == shard.rank()) {
                if (from != start) {
                    throw new IllegalStateException(GATHER.name(stepId, index) + ": this rank's columns start at " + from
                            + ", but the lower ranks' end at " + start);
                }
                w = width;
            } else {
                SharedMailbox.Received theirs = awaitPeer(r, stepId, index, deadline, stepStartNanos, cancelled, GATHER);
                w = theirs.cols;
                if (theirs.rows != rows || theirs.dtype != ActivationDtype.FLOAT32 || start + w > total) {
                    throw new IllegalStateException(GATHER.name(stepId, index) + ": " + peer(r) + " sent " + theirs.dtype + " columns of shape [" + theirs.rows
                            + ", " + w + "] at column " + start + ", expected FLOAT32 rows of " + rows + " within " + total + " columns");
                }
                if (part.length < rows * w) {
                    part = new float[rows * w];
                }
                theirs.decode(part, 0);
                for (int i = 0; i < rows; i++) {
                    System.arraycopy(part, i * w, x, i * total + start, w);
                }
            }
            start += w;
        }
        if (start != total) {
            throw new IllegalStateException(GATHER.name(stepId, index) + ": the ranks' columns cover " + start + " of " + total);
        }
        return sent;
    }

    private static final PeerQueue.Wait ALL_REDUCE = (step, index) -> "all-reduce " + index + " of step " + step;
    private static final PeerQueue.Wait GATHER = (step, index) -> "gather " + index + " of step " + step;

    /**
     * Peer {@code r}'s message {@code index} of step {@code stepId}, by shared memory or gRPC, in {@link #received}
     * (valid until the next call); {@code what} names it in errors.
     */
    private SharedMailbox.Received awaitPeer(int r, long stepId, int index, long deadline, long stepStartNanos, BooleanSupplier cancelled,
                                             PeerQueue.Wait what) {
        return shmInbox == null ? received.of(inbox[r].take(stepId, index, deadline, timeout, stepStartNanos, cancelled, what))
                : awaitEither(r, stepId, index, deadline, stepStartNanos, cancelled, what);
    }

    /** {@code x}'s first {@code rows × cols} values encoded by {@code c} into {@link #mine}; the bytes written. */
    private int encode(ActivationCodec c, float[] x, int rows, int cols) {
        long need = c.dtype().encodedBytes(rows, cols);
        if (mine.length < need) {
            mine = new byte[Math.toIntExact(need)];
        }
        return c.encodeInto(x, 0, rows, cols, mine);
    }

    /**
     * Sends this rank's partial (the first {@code length} bytes of {@link #mine}, encoded by {@code c}): into the
     * shared-memory inbox of each peer on this host (looked for, and re-checked, every {@link #SHM_RECHECK_NANOS}), by
     * gRPC to the others and where it does not fit a slot (a copy of the bytes, which the message keeps).
     */
    private long send(long stepId, int index, ActivationCodec c, int rows, int cols, int length) {
        if (shmInbox == null) {
            return outbound.send(stepId, index, copyOfMine(c, rows, cols, length), null);
        }
        long now = System.nanoTime();
        long bytes = 0;
        boolean anyGrpc = false;
        for (int r = 0; r < shmPeer.length; r++) {
            grpcTo[r] = false;
            if (r == shard.rank()) {
                continue;
            }
            SharedMailbox peer = peerInbox(r, now);
            if (peer != null && peer.open() && peer.fits(stepId, index, length)) {
                peer.put(shard.rank(), stepId, index, c.dtype(), c.order(), rows, cols, mine, length);
                bytes += length;
                shmPartials++;
            } else {
                if (peer != null && !peer.open()) {
                    shmNextLook[r] = now; // the peer unloaded it (or reloads): look for its new one next time
                }
                grpcTo[r] = true;
                anyGrpc = true;
            }
        }
        if (anyGrpc) {
            bytes += outbound.send(stepId, index, copyOfMine(c, rows, cols, length), grpcTo);
        }
        return bytes;
    }

    private Activations copyOfMine(ActivationCodec c, int rows, int cols, int length) {
        return new Activations(c.dtype(), c.order(), rows, cols, java.util.Arrays.copyOf(mine, length));
    }

    /** Peer {@code r}'s inbox on this host, mapped now if it appeared, dropped if it went; null: by gRPC. */
    private SharedMailbox peerInbox(int r, long now) {
        if (now - shmNextLook[r] < 0) {
            return shmPeer[r];
        }
        shmNextLook[r] = now + SHM_RECHECK_NANOS;
        SharedMailbox m = shmPeer[r];
        if (m != null && m.current()) {
            return m;
        }
        if (m != null) {
            m.close();
        }
        m = SharedMailbox.attach(shard.group(), r, shard.worldSize());
        shmPeer[r] = m;
        if (m != null) {
            // the gRPC stream to the peer carries no partials now, but stays open: its end tells the peer we are gone
            boolean[] only = new boolean[shmPeer.length];
            only[r] = true;
            outbound.send(HELLO_STEP, 0, Activations.encode(codec, new float[1], 0, 1, 1), only);
        }
        return m;
    }

    /**
     * Waits for peer {@code r}'s partial in the shared-memory inbox or from its gRPC stream, whichever it comes by: spins
     * briefly (the peer is usually microseconds away), then yields the core to this node's other threads, then parks in
     * short naps; bounded like {@link PeerQueue#take}.
     */
    private SharedMailbox.Received awaitEither(int r, long stepId, int index, long deadline, long stepStartNanos, BooleanSupplier cancelled,
                                               PeerQueue.Wait what) {
        long start = System.nanoTime();
        long nextCancelCheck = start + 20_000_000L;
        for (int spins = 0; ; spins++) {
            if (shmInbox.pollInto(r, stepId, index, received)) {
                return received;
            }
            Activations a = inbox[r].poll(stepId, index, stepStartNanos, what);
            if (a != null) {
                return received.of(a);
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                throw new IllegalStateException(what.name(stepId, index) + ": no partial from " + peer(r) + " within " + timeout);
            }
            if (now - nextCancelCheck >= 0) {
                nextCancelCheck = now + 20_000_000L;
                if (cancelled.getAsBoolean()) {
                    throw new IllegalStateException(what.name(stepId, index) + ": the coordinator cancelled the step");
                }
            }
            long waited = now - start;
            if (waited < 200_000L) {
                // no Thread.onSpinWait(): under KVM a PAUSE loop makes the host deschedule this vCPU (pause-loop exiting)
            } else if (waited < 5_000_000L) {
                Thread.yield();
            } else {
                java.util.concurrent.locks.LockSupport.parkNanos(100_000L);
            }
        }
    }

    /** Partials this rank put into peers' shared-memory inboxes (the rest went by gRPC). */
    public long sharedMemoryPartials() {
        return shmPartials;
    }

    /** Whether this rank has a shared-memory inbox for peers on its host. */
    public boolean sharedMemory() {
        return shmInbox != null;
    }

    @Override
    public void close() {
        if (outbound != null) {
            outbound.close();
        }
        for (int r = 0; r < shmPeer.length; r++) {
            if (shmPeer[r] != null) {
                shmPeer[r].close();
                shmPeer[r] = null;
            }
        }
        if (shmInbox != null) {
            shmInbox.close();
        }
    }
}
