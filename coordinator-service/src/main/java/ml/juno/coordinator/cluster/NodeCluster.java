package ml.juno.coordinator.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import ml.juno.coordinator.engine.BackendInfo;
import ml.juno.coordinator.scheduler.ScheduledRow;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.model.shard.ShardAssignment;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.ShardInfo;
import ml.juno.node.v1.ShardState;
import org.jboss.logging.Logger;

/**
 * The nodes of a cluster and their lives: one {@link NodeLink} per node, each loaded with its shard; deadlines on every
 * call; a health thread that pings the nodes, reconnects a node that comes back and loads its shard again; and the
 * failure policy of a step (a node that broke is marked down, the step's slots are released on the others, and steps
 * fail fast while a node is down). It knows nothing of what a step computes: the pipeline and tensor-parallel
 * executors do that, under {@link #run}.
 *
 * <p>Steps run on the generation loop's thread; the health thread takes the same lock, between steps.
 */
final class NodeCluster implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(NodeCluster.class);
    private static final long HEALTH_PERIOD_MS = 500;
    private static final long PING_EVERY_MS = 2000;

    /** What an executor does with the nodes in one step. */
    @FunctionalInterface
    interface Step {
        StepResult run(StepPlan plan) throws NodeFailure;
    }

    private final ClusterConfig config;
    private final List<NodeLink> links = new ArrayList<>();
    private final List<ShardAssignment> assignments;
    private final LoadShardRequest base;
    private final ReentrantLock lock = new ReentrantLock();
    private final Thread health;
    private volatile boolean closed;
    private final Heartbeat heartbeat;
    private long lastPing;
    /** This cluster's id for its tensor-parallel group or pipeline: a node refuses partials or rows of any other. */
    private final long group = new java.security.SecureRandom().nextLong();
    /**
     * The old data path, kept to compare ({@code -Djuno.cluster.hub=true}): pipeline stages' hidden states travel through
     * the coordinator and every logit row comes back as logits. Default: stage to stage, the last node draws.
     */
    private final boolean hub = Boolean.getBoolean("juno.cluster.hub");

    /**
     * @param base the load request every node gets, without its partition
     */
    NodeCluster(ClusterConfig config, List<ShardAssignment> assignments, LoadShardRequest base) {
        this.config = config;
        this.assignments = assignments;
        this.base = base;
        for (int i = 0; i < config.nodes().size(); i++) {
            links.add(new NodeLink(config.nodes().get(i), i, config.tlsDir()));
        }
        this.health = Thread.ofPlatform().name("juno-cluster-health").daemon().unstarted(this::healthLoop);
        this.heartbeat = new Heartbeat(links);
    }

    List<NodeLink> links() {
        return links;
    }

    /** True when activations and logits go through the coordinator (the old path). */
    boolean hub() {
        return hub;
    }

    List<ShardAssignment> assignments() {
        return assignments;
    }

    ClusterConfig config() {
        return config;
    }

    /** The nodes, their shards and state, for operators. */
    ml.juno.coordinator.engine.Topology topology() {
        List<ml.juno.coordinator.engine.Topology.Node> nodes = new ArrayList<>();
        for (NodeLink l : links) {
            ShardAssignment a = assignments.get(l.index);
            boolean up = l.isUp();
            nodes.add(new ml.juno.coordinator.engine.Topology.Node(l.address.toString(), up, up ? "" : l.downReason(),
                    a.layers().start(), a.layers().end(), a.tensorRank(), a.worldSize(), l.bytesSent, l.bytesReceived, l.hops,
                    l.hopNanos, l.computeNanos, l.reductions, l.reduceNanos, l.peerBytesSent));
        }
        return new ml.juno.coordinator.engine.Topology(config.parallelism().name().toLowerCase(java.util.Locale.ROOT),
                config.wire().dtype().name(), config.wire().order().toString(), nodes);
    }

    /** Waits for every node (they may still be starting), loads every shard, then starts the health thread. */
    void start() throws NodeFailure {
        long deadline = System.nanoTime() + config.deadlines().connect().toNanos();
        for (NodeLink link : links) {
            while (true) {
                try {
                    link.status(config.deadlines().call());
                    break;
                } catch (NodeFailure e) {
                    if (System.nanoTime() > deadline || closed) {
                        throw new NodeFailure(link, e.getMessage() + " (waited " + config.deadlines().connect() + ")");
                    }
                    sleep(200);
                }
            }
        }
        for (NodeLink link : links) {
            connect(link);
        }
        lastPing = System.nanoTime();
        health.start();
        heartbeat.start();
    }

    /** Loads the node's shard (again) and opens its step stream. */
    private void connect(NodeLink link) throws NodeFailure {
        link.status(config.deadlines().call());
        LoadShardRequest.Builder b = ProtoMapping.partition(base.toBuilder(), assignments.get(link.index));
        if (assignments.get(link.index).isTensorParallel()) { // the ranks reduce with each other: tell them where they are
            b.getTensorBuilder().addAllPeers(links.stream().map(l -> l.address.toString()).toList()).setGroup(group)
                    .setReduceTimeoutMillis(reduceTimeout(config.deadlines().step()).toMillis());
        } else if (!hub && links.size() > 1) { // the stages send each other their rows: tell them where they are
            ProtoMapping.stages(b, links.stream().map(l -> l.address.toString()).toList(), link.index, group,
                    reduceTimeout(config.deadlines().step()).toMillis());
        }
        LoadShardRequest request = b.build();
        var info = link.load(request, config.deadlines().load());
        link.openStream();
        link.markUp();
        LOG.infof("node %s serves %s (%d MB weights, %d MB KV, loaded in %d ms; backend %s)%s", link.address,
                info.getWorldSize() > 1 ? "tensor slice " + info.getTensorRank() + "/" + info.getWorldSize()
                        : "layers [" + info.getFirstLayer() + ", " + info.getEndLayer() + ")",
                info.getWeightBytes() >> 20, info.getKvBytes() >> 20, info.getLoadMillis(), nodeBackend(info),
                link.sharedMemory() ? "; steps through shared memory (same host)" : "");
    }

    /**
     * Runs {@code step} with the nodes to itself: fails fast while a node is down, and turns a node's failure into a
     * failed step after applying the failure policy.
     */
    StepResult run(StepPlan plan, Step step) {
        return locked(plan, step, true);
    }

    /**
     * {@code step} under the cluster lock: with {@code upFirst}, a failure at once while a node is down; a node's failure
     * (or any other) becomes a failed step after the failure policy.
     */
    private StepResult locked(StepPlan plan, Step step, boolean upFirst) {
        lock.lock();
        try {
            if (upFirst) {
                for (NodeLink l : links) {
                    if (!l.isUp()) {
                        return new StepResult.Failure("cluster degraded: node " + l.address + " is down (" + l.downReason() + "); reconnecting");
                    }
                }
            }
            try {
                return step.run(plan);
            } catch (NodeFailure e) {
                return fail(plan, e);
            } catch (RuntimeException e) {
                return fail(plan, new NodeFailure(null, "step " + plan.stepId() + " failed: " + e, true));
            }
        } finally {
            lock.unlock();
        }
    }

    /** Sends a step on its way (a pipeline keeps several in flight). */
    @FunctionalInterface
    interface Send {
        void send(StepPlan plan) throws NodeFailure;
    }

    /**
     * The first half of {@link #run}: sends {@code plan}'s step with the nodes to itself and returns null, or the step's
     * failure (a node down: fail fast; a send that failed: after the failure policy). The result comes from
     * {@link #receive}, steps in the order sent.
     */
    StepResult send(StepPlan plan, Send send) {
        return locked(plan, p -> {
            send.send(p);
            return null;
        }, true);
    }

    /** The second half of {@link #run}: waits for the answers to a step {@link #send} sent. */
    StepResult receive(StepPlan plan, Step receive) {
        return locked(plan, receive, false);
    }

    /** Why the step streams were last reset ("" until they were), for the steps that were in flight on them. */
    private volatile String lastReset = "";

    String lastReset() {
        return lastReset;
    }

    /** Marks a dead node down, resets the streams a failed step may have left mid-way, releases the slots. */
    private StepResult fail(StepPlan plan, NodeFailure e) {
        if (e.staleStream()) { // its streams were reset by an earlier step's failure: release its slots, reset nothing
            release(plan);
            return new StepResult.Failure(e.getMessage());
        }
        lastReset = "step " + plan.stepId() + " failed: " + e.getMessage();
        NodeLink bad = e.link();
        if (bad != null && !e.nodeAlive()) {
            bad.markDown(e.getMessage());
            LOG.warnf("node %s is down: %s", bad.address, e.getMessage());
        }
        List<Integer> slots = new ArrayList<>();
        for (ScheduledRow r : plan.rows()) {
            slots.add(r.slot());
        }
        for (NodeLink l : links) {
            if (!l.isUp()) {
                continue;
            }
            if (config.parallelism() == Parallelism.TENSOR || !hub) {
                l.openStream(); // a rank (a stage) may wait for a sum (rows) that never comes: its old stream is cancelled
            }
            try {
                l.release(slots, config.deadlines().call());
            } catch (NodeFailure f) {
                l.markDown(f.getMessage());
            }
        }
        return new StepResult.Failure(e.getMessage());
    }

    /** Releases the step's slots on the nodes that are up, without the lock; a node that does not answer is left alone. */
    void releaseQuietly(StepPlan plan) {
        List<Integer> slots = new ArrayList<>();
        for (ScheduledRow r : plan.rows()) {
            slots.add(r.slot());
        }
        for (NodeLink l : links) {
            if (l.isUp()) {
                try {
                    l.release(slots, config.deadlines().call());
                } catch (NodeFailure ignored) {
                    // the heartbeat and the health thread deal with a node that stopped answering
                }
            }
        }
    }

    private void release(StepPlan plan) {
        List<Integer> slots = new ArrayList<>();
        for (ScheduledRow r : plan.rows()) {
            slots.add(r.slot());
        }
        for (NodeLink l : links) {
            if (l.isUp()) {
                try {
                    l.release(slots, config.deadlines().call());
                } catch (NodeFailure f) {
                    l.markDown(f.getMessage());
                }
            }
        }
    }

    /**
     * How long a rank waits for a peer's partial: three quarters of the step deadline, so a rank whose peer stalls
     * answers which peer it waited for before the coordinator's own deadline passes.
     */
    static java.time.Duration reduceTimeout(java.time.Duration step) {
        return step.multipliedBy(3).dividedBy(4);
    }

    private void healthLoop() {
        while (!closed) {
            sleep(HEALTH_PERIOD_MS);
            lock.lock();
            try {
                if (!closed) {
                    checkHealth();
                }
            } catch (RuntimeException e) {
                LOG.warn("cluster health check failed", e);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Reconnects nodes that are down; pings the others now and then (not one that answered a step in the last second) and
     * marks a node without its shard down.
     */
    private void checkHealth() {
        boolean ping = System.nanoTime() - lastPing > PING_EVERY_MS * 1_000_000L;
        if (ping) {
            lastPing = System.nanoTime();
        }
        for (NodeLink link : links) {
            if (link.isUp()) {
                if (!ping || link.answeredWithin(PING_EVERY_MS * 1_000_000L / 2)) {
                    continue; // a node answering steps holds its shard (one that lost it fails its steps)
                }
                try {
                    NodeStatus s = link.status(config.deadlines().call());
                    if (s.getState() != ShardState.SHARD_STATE_READY) {
                        link.markDown("lost its shard (" + s.getState() + ": " + s.getMessage() + ")");
                        LOG.warnf("node %s %s", link.address, link.downReason());
                    }
                } catch (NodeFailure e) {
                    link.markDown(e.getMessage());
                    LOG.warnf("node %s is down: %s", link.address, e.getMessage());
                }
            } else {
                try {
                    connect(link);
                    LOG.infof("node %s is back", link.address);
                } catch (NodeFailure e) {
                    link.markDown(e.getMessage());
                }
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    boolean healthy() {
        for (NodeLink l : links) {
            if (!l.isUp()) {
                return false;
            }
        }
        return !closed;
    }

    /** Why the cluster cannot serve now, or "" when it can. */
    String healthMessage() {
        for (NodeLink l : links) {
            if (!l.isUp()) {
                return "node " + l.address + " is down: " + l.downReason();
            }
        }
        return "";
    }

    /** Changes whenever a node went down: the KV memory it held may be gone. */
    long kvEpoch() {
        long e = 0;
        for (NodeLink l : links) {
            e += l.downs;
        }
        return e;
    }

    /** The nodes' backends as one (each distinct kind and isa once); unknown until a shard is loaded. */
    BackendInfo backend() {
        List<BackendInfo> parts = new ArrayList<>();
        for (NodeLink l : links) {
            ShardInfo s = l.shard;
            if (s != null) {
                parts.add(nodeBackend(s));
            }
        }
        return BackendInfo.combine(parts);
    }

    /** What a node reported for its shard; a node that does not say (an older build) is unknown. */
    static BackendInfo nodeBackend(ShardInfo s) {
        return s.getBackend().isEmpty() ? BackendInfo.UNKNOWN
                : new BackendInfo(s.getBackend(), s.getIsa().isEmpty() ? "unknown" : s.getIsa());
    }

    /** Traffic and time of every link and of the ranks' own all-reduces, with the executor's step and token counts. */
    ClusterStats stats(long steps, long tokens, long overlapped) {
        long sent = 0;
        long received = 0;
        long hops = 0;
        long hopNanos = 0;
        long compute = 0;
        long reduceNanos = 0;
        long peerBytes = 0;
        long sharedMemoryHops = 0;
        for (NodeLink l : links) {
            sharedMemoryHops += l.sharedMemoryHops;
            sent += l.bytesSent;
            received += l.bytesReceived;
            hops += l.hops;
            hopNanos += l.hopNanos;
            compute += l.computeNanos;
            reduceNanos += l.reduceNanos;
            peerBytes += l.peerBytesSent;
        }
        long reductions = links.isEmpty() ? 0 : links.getFirst().reductions; // every rank does the same ones
        return new ClusterStats(steps, tokens, sent, received, hops, hopNanos, compute, reductions, reduceNanos, peerBytes, overlapped,
                sharedMemoryHops);
    }

    @Override
    public void close() {
        closed = true;
        heartbeat.stop();
        health.interrupt();
        for (NodeLink l : links) {
            l.close();
        }
    }
}
