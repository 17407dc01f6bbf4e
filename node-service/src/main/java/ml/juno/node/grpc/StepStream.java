package ml.juno.node.grpc;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.subscription.MultiEmitter;
import java.util.concurrent.CompletableFuture;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.wire.Activations;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.model.wire.ShardOutput;
import ml.juno.node.runtime.ShardHolder;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.StepResponse;

/**
 * One coordinator's step stream. Batches go to the inference thread in arrival order, each answered by one output. When
 * the coordinator ends or cancels the stream, a tensor-parallel step still waiting for its peers' partials, or a
 * pipeline stage waiting for its previous stage's rows, stops waiting ({@link #cancelled}) instead of holding the
 * inference thread.
 */
final class StepStream {
    private final ShardHolder shard;
    private final MultiEmitter<? super StepResponse> out;
    private volatile boolean cancelled;
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null); // the newest batch's answer

    private StepStream(ShardHolder shard, MultiEmitter<? super StepResponse> out) {
        this.shard = shard;
        this.out = out;
    }

    static Multi<StepResponse> serve(ShardHolder shard, Multi<StepRequest> requests) {
        return Multi.createFrom().emitter(em -> {
            StepStream s = new StepStream(shard, em);
            var subscription = requests.subscribe().with(s::onRequest, failure -> s.abort(), s::end);
            em.onTermination(() -> {
                subscription.cancel();
                s.cancelled = true;
            });
        });
    }

    private void onRequest(StepRequest r) {
        switch (r.getKindCase()) {
            case BATCH -> last = batch(r.getBatch());
            case KIND_NOT_SET -> out.fail(new IllegalArgumentException("empty step request"));
        }
    }

    /** Runs a wire batch in arrival order; one that is malformed is answered, in its turn, with the reason. */
    private CompletableFuture<Void> batch(ml.juno.node.v1.StepBatch wire) {
        StepBatch batch;
        Activations activations;
        java.util.List<ml.juno.engine.sampling.RowDraw> draws;
        try {
            batch = ProtoMapping.fromProto(wire);
            activations = wire.hasActivations() ? ProtoMapping.fromProto(wire.getActivations()) : null;
            draws = ProtoMapping.samplers(wire, batch.rows().logitRows());
        } catch (IllegalArgumentException e) {
            StepOutput error = ProtoMapping.toProto(ShardOutput.failed(wire.getStepId(), e.getMessage()));
            return last.thenRun(() -> out.emit(StepResponse.newBuilder().setOutput(error).build()));
        }
        return shard.step(batch, activations, wire.getActivationsFromPeer(), wire.getMicroBatch(), draws, () -> cancelled)
                .thenAccept(o -> out.emit(StepResponse.newBuilder().setOutput(ProtoMapping.toProto(o)).build()));
    }

    /** The coordinator finished sending: answer what is in flight, then complete. */
    private void end() {
        last.whenComplete((ignored, e) -> out.complete());
    }

    /** The coordinator's side failed or was cancelled: a step waiting for its peers stops at once. */
    private void abort() {
        cancelled = true;
        out.complete();
    }
}
