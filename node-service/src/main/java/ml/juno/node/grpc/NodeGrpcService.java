package ml.juno.node.grpc;

import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import ml.juno.engine.EngineInfo;
import ml.juno.node.runtime.ShardHolder;
import ml.juno.node.v1.NodeService;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.StatusRequest;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/** gRPC edge of the node: maps proto to the runtime and back, no logic of its own. */
@GrpcService
public class NodeGrpcService implements NodeService {

    @Inject
    ShardHolder shard;

    @ConfigProperty(name = "juno.node.id")
    String nodeId;

    @Override
    public Uni<NodeStatus> getStatus(StatusRequest request) {
        ShardHolder.State s = shard.state();
        Runtime rt = Runtime.getRuntime();
        long used = rt.totalMemory() - rt.freeMemory();
        return Uni.createFrom().item(NodeStatus.newBuilder()
                .setNodeId(nodeId)
                .setState(s.state())
                .setMessage(s.message())
                .setBackend(EngineInfo.cpuBackendName())
                .setComputeThreads(Runtime.getRuntime().availableProcessors())
                .setMemoryUsedBytes(used)
                .setMemoryFreeBytes(rt.maxMemory() - used)
                .setVersion(EngineInfo.VERSION)
                .build());
    }
}
