package ml.juno.coordinator.cluster;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import io.smallrye.mutiny.operators.multi.processors.UnicastProcessor;
import io.smallrye.mutiny.subscription.Cancellable;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import ml.juno.model.shm.ControlChannel;
import ml.juno.model.shm.ShmFiles;
import ml.juno.node.v1.ControlAttach;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.MutinyNodeServiceGrpc;
import ml.juno.node.v1.NodeServiceGrpc;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.ReleaseRequest;
import ml.juno.node.v1.ShardInfo;
import ml.juno.node.v1.StatusRequest;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.StepResponse;

/**
 * The coordinator's connection to one node: a channel, unary calls with deadlines, and the node's step stream (a
 * Mutiny {@code Multi<StepRequest> → Multi<StepResponse>}: requests go in through a unicast processor, answers are
 * queued for the generation loop's thread, which waits for them with a deadline). Counts bytes both ways. The channel
 * runs its callbacks on its transport thread ({@code directExecutor}): they only queue what came, and a hand-over to
 * gRPC's default executor would add a thread wake-up to every answer on a token's path. A node on this host takes the
 * stream's steps through a shared-memory {@link ControlChannel} instead, which the generation loop's thread writes and
 * sleeps on itself; the stream then carries only its end.
 */
final class NodeLink implements AutoCloseable {
    private static final int MAX_MESSAGE = 512 * 1024 * 1024;

    /** The end of the node's answer stream, with its cause (null: completed). */
    private record Ended(Throwable cause) {}

    final NodeAddress address;
    final int index;
    private final ManagedChannel channel;
    private final NodeServiceGrpc.NodeServiceBlockingStub blocking;
    private final MutinyNodeServiceGrpc.MutinyNodeServiceStub mutiny;
    /** How long a stream's opening waits for the node's answer to the shared-memory attach. */
    private static final long ATTACH_WAIT_MILLIS = 2_000;
    /** How long a send waits while the node's shared-memory inbox is full (it reads every message at once). */
    private static final long CONTROL_SEND_NANOS = 10_000_000_000L;

    private UnicastProcessor<StepRequest> out;
    private volatile BlockingQueue<Object> in;
    /** This stream's shared-memory channel to the node; null: steps go by gRPC. */
    private volatile ControlChannel control;
    /** What ends a wait on {@link #control} early: the stream's end is queued, or the channel was replaced. */
    private java.util.function.BooleanSupplier controlStop;
    private Cancellable subscription;
    private volatile boolean up;
    private volatile String downReason = "not connected yet";
    volatile ShardInfo shard;
    /** When the node last answered a step (System.nanoTime): a node that answers steps needs no status call. */
    private volatile long lastAnswerNanos = System.nanoTime() - (1L << 62);
    volatile long bytesSent;
    volatile long bytesReceived;
    volatile long hops;
    volatile long hopNanos;      // send to answer, summed
    volatile long computeNanos;  // what the node says it computed, summed
    volatile long reductions;    // all-reduces the node did with its tensor-parallel peers
    volatile long reduceNanos;   // time it spent in them, summed
    volatile long peerBytesSent; // bytes of partials it sent to its peers (node to node, not through here)
    volatile long sharedMemoryHops; // hops whose request and answer went through the shared-memory channel

    NodeLink(NodeAddress address, int index) {
        this(address, index, null);
    }

    /** @param tlsDir mutual TLS from this folder (the node must chain to its CA, and accepts only our certificate); null: plaintext */
    NodeLink(NodeAddress address, int index, java.nio.file.Path tlsDir) {
        this.address = address;
        this.index = index;
        this.channel = channel(address, tlsDir);
        this.blocking = NodeServiceGrpc.newBlockingStub(channel).withMaxInboundMessageSize(MAX_MESSAGE).withMaxOutboundMessageSize(MAX_MESSAGE);
        this.mutiny = MutinyNodeServiceGrpc.newMutinyStub(channel).withMaxInboundMessageSize(MAX_MESSAGE).withMaxOutboundMessageSize(MAX_MESSAGE);
    }

    private static ManagedChannel channel(NodeAddress address, java.nio.file.Path tlsDir) {
        if (tlsDir == null) {
            return ManagedChannelBuilder.forAddress(address.host(), address.port()).usePlaintext().maxInboundMessageSize(MAX_MESSAGE)
                    .directExecutor().build();
        }
        try {
            return io.grpc.Grpc.newChannelBuilderForAddress(address.host(), address.port(),
                    ml.juno.coordinator.tls.TlsDir.coordinatorCredentials(tlsDir)).maxInboundMessageSize(MAX_MESSAGE).directExecutor().build();
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    boolean isUp() {
        return up;
    }

    String downReason() {
        return downReason;
    }

    void markUp() {
        up = true;
    }

    /** Times this node was marked down: each time its KV memory may be gone. */
    volatile long downs;

    void markDown(String reason) {
        downs++;
        up = false;
        downReason = reason;
        closeStream();
    }

    /** Marks the node down and ends a wait for its step answer now (the heartbeat found it unresponsive). */
    void abort(String reason) {
        BlockingQueue<Object> q = in;
        if (q != null) {
            q.offer(new Ended(new IllegalStateException(reason))); // before the channel closes: a wait it wakes finds it
        }
        markDown(reason);
    }

    NodeStatus status(Duration deadline) throws NodeFailure {
        try {
            channel.resetConnectBackoff(); // a restarted node is reachable at once, not after gRPC's growing backoff
            return blocking.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS).getStatus(StatusRequest.getDefaultInstance());
        } catch (StatusRuntimeException e) {
            throw new NodeFailure(this, "node " + address + " unreachable: " + e.getStatus().getCode() + describe(e));
        }
    }

    ShardInfo load(LoadShardRequest request, Duration deadline) throws NodeFailure {
        try {
            ShardInfo info = blocking.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS).loadShard(request);
            shard = info;
            return info;
        } catch (StatusRuntimeException e) {
            throw new NodeFailure(this, "node " + address + " could not load its shard: " + e.getStatus().getCode() + describe(e));
        }
    }

    int release(List<Integer> slots, Duration deadline) throws NodeFailure {
        try {
            return blocking.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
                    .release(ReleaseRequest.newBuilder().addAllSlots(slots).build()).getReleased();
        } catch (StatusRuntimeException e) {
            throw new NodeFailure(this, "node " + address + " release failed: " + e.getStatus().getCode() + describe(e));
        }
    }

    private static String describe(StatusRuntimeException e) {
        return e.getStatus().getDescription() == null ? "" : " (" + e.getStatus().getDescription() + ")";
    }

    /**
     * Counts the step streams opened and closed: a step sent on one stream cannot be answered on another, so a step that
     * was in flight when its stream was reset fails at once instead of waiting for its deadline.
     */
    private volatile long streamGeneration;

    long streamGeneration() {
        return streamGeneration;
    }

    /**
     * Opens a fresh step stream (closing the old one). Where this host may share memory, it first asks the node to take
     * the stream's steps through a {@link ControlChannel}: a node on this host attaches and says so, and every later
     * request and answer goes through the channel; a node elsewhere (or one that cannot) says why not, and the stream
     * carries them as before.
     */
    void openStream() {
        openStream(ControlChannel.usable());
    }

    private void openStream(boolean tryControl) {
        closeStream();
        BlockingQueue<Object> q = new LinkedBlockingQueue<>();
        UnicastProcessor<StepRequest> p = UnicastProcessor.create();
        in = q;
        out = p;
        subscription = mutiny.step(p).subscribe().with(r -> arrived(q, r), e -> arrived(q, new Ended(e)), () -> arrived(q, new Ended(null)));
        if (tryControl) {
            attachControl(q, p);
        }
    }

    /** A message or the stream's end from the transport thread: queued, and a wait on the control channel woken. */
    private void arrived(BlockingQueue<Object> q, Object o) {
        q.offer(o);
        ControlChannel c = control;
        if (c != null) {
            c.wake();
        }
    }

    private void attachControl(BlockingQueue<Object> q, UnicastProcessor<StepRequest> p) {
        ControlChannel c;
        try {
            c = ControlChannel.create();
        } catch (java.io.IOException | RuntimeException e) {
            TRACE.debugf("node %s: no shared-memory channel (%s); steps go by gRPC", address, e.getMessage());
            return;
        }
        p.onNext(StepRequest.newBuilder().setAttach(ControlAttach.newBuilder().setName(c.name()).setHost(ShmFiles.HOST)).build());
        Object o;
        try {
            o = q.poll(ATTACH_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            o = null;
        }
        if (o instanceof StepResponse r && r.hasAttached()) {
            if (r.getAttached().getAttached()) {
                controlStop = () -> !q.isEmpty() || control != c;
                control = c;
                return;
            }
            c.close();
            TRACE.debugf("node %s: steps go by gRPC (%s)", address, r.getAttached().getReason());
            return;
        }
        c.close();
        if (o == null) { // no answer in time: the node may still attach, so this stream is given up for a plain one
            TRACE.debugf("node %s did not answer the shared-memory attach in %d ms; steps go by gRPC", address, ATTACH_WAIT_MILLIS);
            openStream(false);
        } else {
            q.offer(o); // the stream's end (the only thing that can come before the answer): the next receive reports it
        }
    }

    void closeStream() {
        streamGeneration++;
        ControlChannel c = control;
        control = null;
        if (c != null) {
            c.close(); // wakes a wait on it
        }
        UnicastProcessor<StepRequest> p = out;
        Cancellable s = subscription;
        out = null;
        subscription = null;
        if (p != null) {
            p.onComplete();
        }
        if (s != null) {
            s.cancel();
        }
    }

    /** Whether this stream's steps go through shared memory. */
    boolean sharedMemory() {
        return control != null;
    }

    void send(StepRequest r) throws NodeFailure {
        ControlChannel c = control;
        if (c != null) {
            byte[] bytes = r.toByteArray();
            bytesSent += bytes.length;
            try {
                c.send(bytes, System.nanoTime() + CONTROL_SEND_NANOS);
            } catch (IllegalStateException e) {
                throw new NodeFailure(this, "node " + address + ": " + e.getMessage());
            }
            return;
        }
        UnicastProcessor<StepRequest> p = out;
        if (p == null) {
            throw new NodeFailure(this, "node " + address + " has no open step stream");
        }
        bytesSent += r.getSerializedSize();
        p.onNext(r);
    }

    /** The node's next message on the step stream, waiting until {@code deadlineNanos} (System.nanoTime). */
    StepResponse receive(long deadlineNanos, long stepId) throws NodeFailure {
        ControlChannel c = control;
        BlockingQueue<Object> q = in;
        Object o;
        if (c != null) {
            byte[] m = c.receive(deadlineNanos, controlStop);
            if (m != null) {
                bytesReceived += m.length;
                lastAnswerNanos = System.nanoTime();
                try {
                    return StepResponse.parseFrom(m);
                } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                    throw new NodeFailure(this, "node " + address + " sent a malformed answer through shared memory: " + e.getMessage());
                }
            }
            o = q.poll(); // the stream ended (its end is queued), or it was closed here
            if (o == null && (c.peerGone() || control != c)) {
                throw new NodeFailure(this, "node " + address + (c.peerGone() ? " left its shared-memory channel" : " has no open step stream"));
            }
        } else {
            try {
                o = q.poll(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new NodeFailure(this, "interrupted while waiting for node " + address);
            }
        }
        if (o == null) {
            throw new NodeFailure(this, "node " + address + " did not answer step " + stepId + " within the deadline");
        }
        if (o instanceof Ended e) {
            q.offer(e);
            throw new NodeFailure(this, "node " + address + " closed its step stream"
                    + (e.cause() == null ? "" : ": " + (e.cause() instanceof StatusRuntimeException s ? s.getStatus().getCode() + describe(s) : e.cause().toString())));
        }
        StepResponse r = (StepResponse) o;
        bytesReceived += r.getSerializedSize();
        lastAnswerNanos = System.nanoTime();
        return r;
    }

    /**
     * Whether the node answered a step within the last {@code nanos}: it is alive and holds its shard, so the status
     * calls of the heartbeat and the health thread would only take CPU from the cores it computes on.
     */
    boolean answeredWithin(long nanos) {
        return System.nanoTime() - lastAnswerNanos < nanos;
    }

    void recordHop(long nanos, long nodeComputeNanos) {
        hops++;
        if (control != null) {
            sharedMemoryHops++;
        }
        hopNanos += nanos;
        computeNanos += nodeComputeNanos;
        if (TRACE.isTraceEnabled()) { // --verbose: one line per hop
            TRACE.tracef("hop %s (node %d): %.2f ms, of which the node computed %.2f ms; %d B sent, %d B received in all", address, index,
                    nanos / 1e6, nodeComputeNanos / 1e6, bytesSent, bytesReceived);
        }
    }

    /** What the node did with its tensor-parallel peers in one step. */
    void recordReductions(long count, long nanos, long bytes) {
        reductions += count;
        reduceNanos += nanos;
        peerBytesSent += bytes;
    }

    private static final org.jboss.logging.Logger TRACE = org.jboss.logging.Logger.getLogger(NodeLink.class);

    @Override
    public void close() {
        ControlChannel c = control;
        control = null;
        if (c != null) {
            c.close();
        }
        UnicastProcessor<StepRequest> p = out;
        out = null;
        if (p != null) {
            p.onComplete(); // the node completes the stream in turn: no error to drop
        }
        channel.shutdown();
        try {
            if (!channel.awaitTermination(1, TimeUnit.SECONDS)) {
                channel.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            channel.shutdownNow();
        }
    }
}
