package ml.juno.node.grpc;

import io.grpc.Status;
import io.quarkus.grpc.GrpcService;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
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
import ml.juno.node.v1.PeerPartial;
import ml.juno.node.v1.ReduceSummary;
import ml.juno.node.runtime.RankReduce;
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
        return StepStream.serve(shard, requests);
    }

    /** A peer rank's partials, one stream per peer; a partial this node cannot take ends the stream with the reason. */
    @Override
    public Uni<ReduceSummary> reduce(Multi<PeerPartial> partials) {
        long[] from = {0, -1}; // group and rank of the stream's sender, once it sent something
        return partials
                .onItem().invoke(p -> {
                    from[0] = p.getGroup();
                    from[1] = p.getFromRank();
                    shard.peerPartial(new RankReduce.Partial(p.getGroup(), p.getFromRank(), p.getStepId(), p.getIndex(),
                            ProtoMapping.fromProto(p.getPartial())));
                })
                .onTermination().invoke((failure, cancelled) -> {
                    if (from[1] >= 0) {
                        shard.peerEnded(from[0], (int) from[1], "the stream from rank " + from[1] + " ended"
                                + (failure != null ? ": " + Status.fromThrowable(failure).getCode() : cancelled ? " (cancelled)" : ""));
                    }
                })
                .collect().with(java.util.stream.Collectors.counting())
                .map(n -> ReduceSummary.newBuilder().setReceived(n).build())
                .onFailure(IllegalArgumentException.class).transform(e -> {
                    LOG.warnf("refused a peer's partials: %s", e.getMessage());
                    return Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asRuntimeException();
                });
    }

    @Override
    public Uni<ReleaseResponse> release(ReleaseRequest request) {
        return Uni.createFrom().completionStage(() -> shard.release(request.getSlotsList()))
                .map(n -> ReleaseResponse.newBuilder().setReleased(n).build());
    }
}
