package ml.juno.coordinator.cluster;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.Optional;
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.ProtoMapping;

/**
 * {@code juno.cluster.*}: set {@code nodes} and the coordinator computes on those nodes instead of in process
 * ({@code juno cluster} and {@code juno coordinator} pass these).
 */
@ConfigMapping(prefix = "juno.cluster")
public interface ClusterSettings {

    /** {@code host:port,host:port,…} in pipeline (rank) order; unset: the in-process engine. */
    Optional<String> nodes();

    /**
     * Without {@code nodes}: the nodes join by themselves ({@code juno node --join URL}, {@link NodeRegistry}) and the
     * coordinator serves once this many have joined, reloading the shards whenever one joins or leaves.
     */
    Optional<Integer> minNodes();

    /** How long a joined node stays a member without announcing itself again (it announces every few seconds). */
    @WithDefault("10s")
    Duration nodeLease();

    /** pipeline or tensor. */
    @WithDefault("pipeline")
    String parallelism();

    /** FLOAT16 (the default, as the old product's), INT8 or FLOAT32. */
    @WithDefault("FLOAT16")
    String dtype();

    /** LITTLE_ENDIAN or BIG_ENDIAN. */
    @WithDefault("LITTLE_ENDIAN")
    String byteOrder();

    /** Deadline of one forward step over all nodes. */
    @WithDefault("60s")
    Duration stepTimeout();

    /** Deadline of loading a shard. */
    @WithDefault("120s")
    Duration loadTimeout();

    /** How long to wait for the nodes to come up. */
    @WithDefault("60s")
    Duration connectTimeout();

    /** Compute threads per node; 0 = all its cores. */
    @WithDefault("0")
    int threadsPerNode();

    /** Mutual TLS with the nodes: the folder {@code juno certs} wrote ({@code ca.pem}, {@code coordinator.pem}, …). */
    Optional<java.nio.file.Path> tlsDir();

    /** The cluster these settings describe (nodes must be set). */
    default ClusterConfig toConfig() {
        return toConfig(NodeAddress.parseList(nodes().orElseThrow()));
    }

    /** The cluster these settings describe over {@code nodes} (a registry's members). */
    default ClusterConfig toConfig(java.util.List<NodeAddress> nodes) {
        return new ClusterConfig(nodes, Parallelism.parse(parallelism()),
                new ClusterConfig.Wire(ActivationDtype.parse(dtype()), ProtoMapping.parseByteOrder(byteOrder())),
                new ClusterConfig.Deadlines(stepTimeout(), loadTimeout(), Duration.ofSeconds(5), connectTimeout()),
                threadsPerNode(), tlsDir().orElse(null));
    }
}
