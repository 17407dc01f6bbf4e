package ml.juno.coordinator.service;

import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import ml.juno.coordinator.cluster.ClusterSettings;
import ml.juno.coordinator.cluster.NodeRegistry;

/** The one {@link NodeRegistry} of this coordinator (used when it runs with {@code juno.cluster.min-nodes} and no fixed nodes). */
@Singleton
public class NodeRegistryProducer {

    @Produces
    @Singleton
    NodeRegistry registry(ClusterSettings cluster) {
        return new NodeRegistry(cluster.nodeLease());
    }

    /** Whether nodes join by themselves: {@code min-nodes} set, no fixed {@code nodes}. */
    static boolean registryMode(ClusterSettings cluster) {
        return cluster.nodes().isEmpty() && cluster.minNodes().isPresent();
    }
}
