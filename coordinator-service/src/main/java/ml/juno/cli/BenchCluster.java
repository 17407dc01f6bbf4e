package ml.juno.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import ml.juno.coordinator.cluster.ClusterConfig;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.ClusterStats;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.EngineLora;
import ml.juno.coordinator.engine.ExecutorFactory;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.model.wire.ActivationDtype;

/**
 * The cluster {@code juno bench --nodes} measures: its node processes ({@link BenchNodes}), how the model is split over
 * them, and the engine's {@link ClusterExecutor}, whose counters ({@link ClusterStats}: bytes each way, rank-to-rank
 * bytes, hops and their time, all-reduces) give the wire cost of every measured test.
 */
final class BenchCluster {
    private final BenchNodes nodes;
    private final Parallelism parallelism;
    private final ActivationDtype dtype;
    private final int threadsPerNode;
    private final int shownThreads;
    private final List<Integer> nodeCpus; // null: unpinned
    private final Integer coordinatorCpu; // null: shares the cores
    private final Path logDir;
    private final EngineLora lora;
    private volatile ClusterExecutor executor;

    BenchCluster(BenchNodes nodes, Parallelism parallelism, ActivationDtype dtype, int threadsPerNode, int shownThreads,
                 List<Integer> nodeCpus, Integer coordinatorCpu, Path logDir, EngineLora lora) {
        this.nodes = nodes;
        this.parallelism = parallelism;
        this.dtype = dtype;
        this.threadsPerNode = threadsPerNode;
        this.shownThreads = shownThreads;
        this.nodeCpus = nodeCpus;
        this.coordinatorCpu = coordinatorCpu;
        this.logDir = logDir;
        this.lora = lora;
    }

    /** The coordinator's engine over the nodes: waits for them to start, loads every shard. */
    InferenceEngine open(EngineConfig engine) throws IOException {
        ClusterConfig cc = new ClusterConfig(nodes.addresses(), parallelism, new ClusterConfig.Wire(dtype, ByteOrder.LITTLE_ENDIAN),
                new ClusterConfig.Deadlines(Duration.ofMinutes(2), Duration.ofMinutes(2), Duration.ofSeconds(5), Duration.ofMinutes(2)),
                threadsPerNode);
        ExecutorFactory factory = (file, model, context, blocks) -> {
            ClusterExecutor ex = (ClusterExecutor) ClusterExecutor.factory(cc, engine, lora).open(file, model, context, blocks);
            executor = ex;
            return ex;
        };
        try {
            return EngineAssembly.open(engine, factory, lora);
        } catch (IOException e) {
            throw new CliException("the benchmark cluster did not start: " + e.getMessage() + nodes.exited() + " (logs in " + logDir + ")");
        }
    }

    /** The cluster's counters so far; only once {@link #open} has returned. */
    ClusterStats stats() {
        ClusterExecutor ex = executor;
        if (ex == null) {
            throw new IllegalStateException("the benchmark cluster is not open");
        }
        return ex.stats();
    }

    /** Each node's compute time so far (what it reports per step, summed), in node order. */
    long[] computeNanos() {
        ClusterExecutor ex = executor;
        if (ex == null) {
            throw new IllegalStateException("the benchmark cluster is not open");
        }
        return ex.topology().nodes().stream().mapToLong(ml.juno.coordinator.engine.Topology.Node::computeNanos).toArray();
    }

    /** Each node's share of {@code wallNanos} spent computing, between two {@link #computeNanos()} readings. */
    static double[] utilisation(long[] before, long[] after, long wallNanos) {
        double[] u = new double[after.length];
        for (int i = 0; i < u.length; i++) {
            u[i] = wallNanos <= 0 ? 0 : (double) (after[i] - before[i]) / wallNanos;
        }
        return u;
    }

    /** One line for the text report. */
    String describe() {
        String pinning = nodeCpus == null ? "unpinned"
                : "node i on core " + CpuPinning.describe(nodeCpus) + "[i], this process " + (coordinatorCpu == null
                ? "sharing their cores" : "on core " + coordinatorCpu);
        return String.format(Locale.ROOT, "cluster: %d node processes, %s, %s on the wire, %d threads per node, %s; logs in %s",
                nodes.addresses().size(), parallelism.name().toLowerCase(Locale.ROOT), dtype, shownThreads, pinning, logDir);
    }

    /** The cluster's fields of the JSON report. */
    void json(ObjectNode o) {
        o.put("nodes", nodes.addresses().size());
        o.put("ptype", parallelism.name().toLowerCase(Locale.ROOT));
        o.put("dtype", dtype.name());
        o.put("threads_per_node", shownThreads);
        o.put("pinned", nodeCpus != null);
        if (nodeCpus != null) {
            ArrayNode cores = o.putArray("node_cpus");
            nodeCpus.forEach(cores::add);
            if (coordinatorCpu != null) {
                o.put("coordinator_cpu", coordinatorCpu);
            } else {
                o.putNull("coordinator_cpu");
            }
        }
        o.put("log_dir", logDir.toString());
    }

    /** Coordinator ↔ nodes (both ways) plus node ↔ node bytes, per token computed. */
    static double bytesPerToken(ClusterStats s) {
        return s.tokens() == 0 ? 0 : (double) (s.bytesSent() + s.bytesReceived() + s.peerBytes()) / s.tokens();
    }

    /** Send-to-answer time of one hop (one node's part of one step), on average. */
    static double millisPerHop(ClusterStats s) {
        return s.hops() == 0 ? 0 : s.hopNanos() / 1e6 / s.hops();
    }

    /** What {@code s} cost on the wire, as JSON fields. */
    static void wireJson(ObjectNode w, ClusterStats s) {
        w.put("steps", s.steps());
        w.put("tokens", s.tokens());
        w.put("bytes_per_token", bytesPerToken(s));
        w.put("coordinator_bytes_per_token", s.coordinatorBytesPerToken());
        w.put("peer_bytes_per_token", s.peerBytesPerToken());
        w.put("bytes_sent", s.bytesSent());
        w.put("bytes_received", s.bytesReceived());
        w.put("peer_bytes", s.peerBytes());
        w.put("hops", s.hops());
        w.put("ms_per_hop", millisPerHop(s));
        w.put("overhead_ms_per_hop", s.overheadMillisPerHop());
        w.put("reductions", s.reductions());
        w.put("ms_per_reduction", s.millisPerReduction());
        w.put("overlapped_steps", s.overlapped());
        w.put("shm_hops", s.sharedMemoryHops());
    }

    /** What {@code s} cost on the wire, as one line. */
    static String wireText(String test, ClusterStats s) {
        String line = String.format(Locale.ROOT,
                "wire %s: %.0f B/token (coordinator ↔ nodes %.0f, node ↔ node %.0f); %d hops, %.3f ms per hop (%.3f ms of it not computing)",
                test, bytesPerToken(s), s.coordinatorBytesPerToken(), s.peerBytesPerToken(), s.hops(), millisPerHop(s), s.overheadMillisPerHop());
        if (s.sharedMemoryHops() > 0) {
            line += String.format(Locale.ROOT, "; %d hops through shared memory", s.sharedMemoryHops());
        }
        if (s.reductions() > 0) {
            line += String.format(Locale.ROOT, "; %d all-reduces, %.3f ms each per rank", s.reductions(), s.millisPerReduction());
        }
        return line;
    }
}
