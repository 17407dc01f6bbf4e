package ml.juno.coordinator.cluster;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import ml.juno.coordinator.engine.BackendInfo;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.EngineLora;
import ml.juno.coordinator.engine.ExecutorFactory;
import ml.juno.coordinator.engine.LogitsObserver;
import ml.juno.coordinator.engine.ManagedExecutor;
import ml.juno.coordinator.engine.Topology;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import org.jboss.logging.Logger;

/**
 * A cluster whose nodes come from a {@link NodeRegistry} ({@code juno coordinator --min-nodes N}, nodes started with
 * {@code juno node --join URL}): it waits until {@code minNodes} have joined, splits the model over the members as
 * {@link ClusterExecutor} does, and whenever one joins or leaves, closes that cluster and loads the shards again over the
 * new members (pipeline stages rebalanced, tensor slices re-cut) on a thread of its own. While it reloads, or while
 * fewer than {@code minNodes} are members, steps fail at once with the reason and the engine is not ready; KV memory
 * does not survive a reload ({@link #kvEpoch} changes, so cached prefixes are forgotten). Between membership changes
 * the cluster behaves as a cluster of fixed nodes: a node that goes down is reconnected and reloaded by its
 * {@link NodeCluster}, and only leaves when its lease runs out.
 */
public final class RegistryExecutor implements ManagedExecutor {
    private static final Logger LOG = Logger.getLogger(RegistryExecutor.class);

    /** What a cluster over some members is opened from. */
    @FunctionalInterface
    interface Opener {
        ClusterExecutor open(List<NodeAddress> nodes) throws IOException;
    }

    private final NodeRegistry registry;
    private final int minNodes;
    private final Opener opener;
    private final ReentrantLock lock = new ReentrantLock(); // held by a step, and by a swap
    private final Thread membership;
    private volatile ClusterExecutor current;
    private volatile String state = "";
    private volatile boolean closed;
    private volatile LogitsObserver observer;
    private List<NodeAddress> serving = List.of();
    private long epochBase; // KV epochs of the clusters closed so far, plus one per reload
    private long stepsBase;
    private long prefillBase;
    private volatile long lastSeen; // the registry version the first cluster was opened at
    private final String mode;

    RegistryExecutor(NodeRegistry registry, int minNodes, String mode, Opener opener) {
        if (minNodes < 1) {
            throw new IllegalArgumentException("--min-nodes must be at least 1, got " + minNodes);
        }
        this.registry = registry;
        this.minNodes = minNodes;
        this.opener = opener;
        this.mode = mode;
        this.membership = Thread.ofPlatform().name("juno-cluster-membership").daemon().unstarted(this::watch);
    }

    /**
     * The executor of an engine over the registry's members split as {@code parallelism}; {@code config} gives the
     * cluster (wire, deadlines, TLS) over a list of members. Opening waits for {@code minNodes} members.
     */
    public static ExecutorFactory factory(NodeRegistry registry, int minNodes, Parallelism parallelism,
                                          Function<List<NodeAddress>, ClusterConfig> config, EngineConfig engine, EngineLora lora) {
        return (file, model, context, kvBlocks) -> {
            RegistryExecutor ex = new RegistryExecutor(registry, minNodes, parallelism.name().toLowerCase(java.util.Locale.ROOT),
                    nodes -> ClusterExecutor.open(config.apply(nodes), engine, file, model, context, kvBlocks, lora));
            ex.start();
            return ex;
        };
    }

    /** Waits for the first {@code minNodes} members and opens the cluster over them, then watches the membership. */
    void start() throws IOException {
        long seen;
        try {
            while (true) {
                seen = registry.version();
                int n = registry.members().size();
                if (n >= minNodes) {
                    break;
                }
                state = "waiting for nodes to join (juno node --join): " + n + " of " + minNodes;
                LOG.infof("%s", state);
                registry.awaitChange(seen, Duration.ofSeconds(30));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while waiting for nodes to join");
        }
        List<NodeAddress> nodes = addresses();
        ClusterExecutor first = opener.open(nodes); // an impossible split fails the start, as with fixed nodes
        lock.lock();
        try {
            current = first;
            serving = nodes;
            state = "";
        } finally {
            lock.unlock();
        }
        LOG.infof("cluster of %d registered nodes: %s", nodes.size(), nodes);
        lastSeen = seen;
        membership.start();
    }

    private List<NodeAddress> addresses() {
        return registry.members().stream().map(NodeRegistry.Member::address).toList();
    }

    /** The membership thread: on every change, reload over the members. */
    private void watch() {
        long seen = lastSeen;
        while (!closed) {
            try {
                long now = registry.awaitChange(seen, Duration.ofSeconds(5));
                List<NodeAddress> nodes = addresses();
                if (now == seen && nodes.equals(serving) && current != null) {
                    continue;
                }
                seen = now;
                if (nodes.equals(serving) && current != null) {
                    continue; // a node left and came back before we looked: its NodeCluster reloads it
                }
                reload(nodes);
            } catch (InterruptedException e) {
                return;
            } catch (RuntimeException e) {
                LOG.warn("cluster membership change failed", e);
            }
        }
    }

    private void reload(List<NodeAddress> nodes) {
        lock.lock(); // after the step in flight
        try {
            ClusterExecutor old = current;
            if (old != null) {
                epochBase += old.kvEpoch() + 1;
                stepsBase += old.steps();
                prefillBase += old.prefillTokens();
                current = null;
                old.close();
            }
            serving = List.of();
        } finally {
            lock.unlock();
        }
        if (closed) {
            return;
        }
        if (nodes.size() < minNodes) {
            String waiting = "waiting for nodes to join (juno node --join): " + nodes.size() + " of " + minNodes;
            if (!waiting.equals(state)) { // the membership thread looks again every few seconds: say it once
                LOG.warnf("%s; not serving", waiting);
            }
            state = waiting;
            return;
        }
        state = "reloading the shards over " + nodes.size() + " nodes after a membership change";
        LOG.infof("membership changed: reloading the shards over %d nodes %s", nodes.size(), nodes);
        long t0 = System.nanoTime();
        try {
            ClusterExecutor next = opener.open(nodes);
            lock.lock();
            try {
                if (closed) {
                    next.close();
                    return;
                }
                next.observeLogits(observer);
                current = next;
                serving = nodes;
                state = "";
            } finally {
                lock.unlock();
            }
            LOG.infof("cluster of %d registered nodes serving again after %d ms: %s", nodes.size(), (System.nanoTime() - t0) / 1_000_000, nodes);
        } catch (IOException | RuntimeException e) {
            state = "cannot serve over the " + nodes.size() + " registered nodes " + nodes + ": " + e.getMessage();
            LOG.warnf("%s; waiting for the next membership change", state);
        }
    }

    @Override
    public StepResult execute(StepPlan plan) {
        lock.lock();
        try {
            ClusterExecutor ex = current;
            if (ex == null) {
                return new StepResult.Failure("cluster not serving: " + state);
            }
            return ex.execute(plan);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public long kvEpoch() {
        lock.lock();
        try {
            ClusterExecutor ex = current;
            return epochBase + (ex == null ? 0 : ex.kvEpoch());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void observeLogits(LogitsObserver o) {
        observer = o;
        ClusterExecutor ex = current;
        if (ex != null) {
            ex.observeLogits(o);
        }
    }

    @Override
    public long prefillTokens() {
        ClusterExecutor ex = current;
        return prefillBase + (ex == null ? 0 : ex.prefillTokens());
    }

    @Override
    public long steps() {
        ClusterExecutor ex = current;
        return stepsBase + (ex == null ? 0 : ex.steps());
    }

    @Override
    public boolean healthy() {
        ClusterExecutor ex = current;
        return !closed && ex != null && ex.healthy();
    }

    @Override
    public String healthMessage() {
        ClusterExecutor ex = current;
        return ex == null ? state : ex.healthMessage();
    }

    @Override
    public BackendInfo backend() {
        ClusterExecutor ex = current;
        return ex == null ? BackendInfo.UNKNOWN : ex.backend();
    }

    @Override
    public Topology topology() {
        ClusterExecutor ex = current;
        return ex == null ? new Topology(mode, "", "", List.of()) : ex.topology();
    }

    /** The counters of the cluster serving now (null while none is). */
    public ClusterStats stats() {
        ClusterExecutor ex = current;
        return ex == null ? null : ex.stats();
    }

    @Override
    public void close() {
        closed = true;
        membership.interrupt();
        lock.lock();
        try {
            ClusterExecutor ex = current;
            current = null;
            if (ex != null) {
                ex.close();
            }
        } finally {
            lock.unlock();
        }
    }
}
