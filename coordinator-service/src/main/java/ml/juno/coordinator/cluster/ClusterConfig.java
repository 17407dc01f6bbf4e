package ml.juno.coordinator.cluster;

import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import ml.juno.model.wire.ActivationDtype;

/**
 * A cluster of nodes and how to use them.
 *
 * @param nodes          the nodes, in pipeline order (rank order for tensor parallelism)
 * @param parallelism    pipeline or tensor
 * @param wire           dtype and byte order of activations and partial sums on the wire
 * @param deadlines      per-call deadlines
 * @param threadsPerNode compute threads each node uses; 0 = all its cores
 * @param tlsDir         mutual TLS with the nodes from this folder ({@code juno certs}); null: plaintext
 */
public record ClusterConfig(List<NodeAddress> nodes, Parallelism parallelism, Wire wire, Deadlines deadlines, int threadsPerNode,
                            java.nio.file.Path tlsDir) {

    /** Plaintext to the nodes. */
    public ClusterConfig(List<NodeAddress> nodes, Parallelism parallelism, Wire wire, Deadlines deadlines, int threadsPerNode) {
        this(nodes, parallelism, wire, deadlines, threadsPerNode, null);
    }

    /** Activation encoding on the wire. */
    public record Wire(ActivationDtype dtype, ByteOrder order) {
        public Wire {
            if (dtype == null || order == null) {
                throw new IllegalArgumentException("wire dtype and byte order are required");
            }
        }
    }

    /**
     * @param step    one forward step (all hops, all all-reduces)
     * @param load    loading a shard on a node
     * @param call    small calls (status, release)
     * @param connect how long to wait for nodes to come up at start
     */
    public record Deadlines(Duration step, Duration load, Duration call, Duration connect) {
        public static Deadlines defaults() {
            return new Deadlines(Duration.ofSeconds(60), Duration.ofSeconds(120), Duration.ofSeconds(5), Duration.ofSeconds(60));
        }
    }

    public ClusterConfig {
        nodes = List.copyOf(nodes);
        if (nodes.isEmpty()) {
            throw new IllegalArgumentException("a cluster needs at least one node");
        }
        if (parallelism == null || wire == null || deadlines == null || threadsPerNode < 0) {
            throw new IllegalArgumentException("bad cluster config");
        }
    }
}
