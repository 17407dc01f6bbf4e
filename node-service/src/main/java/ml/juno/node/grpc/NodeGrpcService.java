package ml.juno.node.grpc;

import io.grpc.Status;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import ml.juno.engine.EngineInfo;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.shard.ShardSummary;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.runtime.ModelsDirectory;
import ml.juno.node.runtime.ShardHolder;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.NodeService;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.ReleaseRequest;
import ml.juno.node.v1.ReleaseResponse;
import ml.juno.node.v1.ShardInfo;
import ml.juno.node.v1.StatusRequest;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.StepResponse;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/** gRPC edge of the node: maps proto to the runtime and back, no logic of its own. */
@GrpcService
public class NodeGrpcService implements NodeService {

    private static final Logger LOG = Logger.getLogger(NodeGrpcService.class);

    @Inject
    ShardHolder shard;

    @ConfigProperty(name = "juno.node.id")
    String nodeId;

    @ConfigProperty(name = "juno.node.reduce-timeout", defaultValue = "30s")
    Duration reduceTimeout;

    @Inject
    ModelsDirectoryConfig models;

    @Override
    public Uni<NodeStatus> getStatus(StatusRequest request) {
        ShardHolder.State s = shard.state();
        Runtime rt = Runtime.getRuntime();
        long used = rt.totalMemory() - rt.freeMemory();
        NodeStatus.Builder b = NodeStatus.newBuilder()
                .setNodeId(nodeId)
                .setState(ProtoMapping.toProto(s.phase()))
                .setMessage(s.message())
                .setBackend(EngineInfo.cpuBackendName())
                .setComputeThreads(Runtime.getRuntime().availableProcessors())
                .setMemoryUsedBytes(used)
                .setMemoryFreeBytes(rt.maxMemory() - used)
                .setVersion(EngineInfo.VERSION);
        ShardSummary info = shard.info();
        if (info != null && shard.ready()) {
            b.setShard(ProtoMapping.toProto(info));
        }
        return Uni.createFrom().item(b.build());
    }

    @Override
    public Uni<ShardInfo> loadShard(LoadShardRequest request) {
        // checked before the shard is touched: a request for a path this node may not open (the model or an adapter), or
        // one that does not map, leaves the loaded shard serving
        LoadShardRequest checked;
        try {
            LoadShardRequest.Builder b = request.toBuilder().setModelPath(models.directory().resolve(request.getModelPath()).toString());
            // LoRA adapter files: the same rule as the model (inside the models directory, real paths)
            for (int i = 0; i < b.getLoraPlayCount(); i++) {
                b.setLoraPlay(i, b.getLoraPlay(i).toBuilder().setPath(models.directory().resolve(b.getLoraPlay(i).getPath()).toString()));
            }
            for (int i = 0; i < b.getLoraModulesCount(); i++) {
                b.setLoraModules(i, b.getLoraModules(i).toBuilder().setPath(models.directory().resolve(b.getLoraModules(i).getPath()).toString()));
            }
            checked = b.build();
        } catch (ModelsDirectory.ModelPathException e) {
            LOG.warnf("LoadShard refused: %s", e.getMessage());
            return Uni.createFrom().failure(Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asRuntimeException());
        }
        ShardLoad load;
        try {
            load = ProtoMapping.fromProto(checked);
        } catch (IllegalArgumentException e) {
            return Uni.createFrom().failure(Status.FAILED_PRECONDITION.withDescription("cannot load " + request.getModelPath()
                    + ": " + e.getMessage()).asRuntimeException());
        }
        return Uni.createFrom().completionStage(() -> shard.load(load))
                .map(ProtoMapping::toProto)
                .onFailure().transform(e -> {
                    Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    return Status.FAILED_PRECONDITION.withDescription(c.getMessage()).asRuntimeException();
                });
    }

    @Override
    public Multi<StepResponse> step(Multi<StepRequest> requests) {
        return StepStream.serve(shard, requests, reduceTimeout);
    }

    @Override
    public Uni<ReleaseResponse> release(ReleaseRequest request) {
        return Uni.createFrom().completionStage(() -> shard.release(request.getSlotsList()))
                .map(n -> ReleaseResponse.newBuilder().setReleased(n).build());
    }
}
