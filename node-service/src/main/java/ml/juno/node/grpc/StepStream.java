package ml.juno.node.grpc;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.subscription.MultiEmitter;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.runtime.Exchange;
import ml.juno.node.runtime.ShardHolder;
import ml.juno.node.v1.ReducePart;
import ml.juno.node.v1.ReduceResult;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.StepResponse;

/**
 * One coordinator's step stream. Batches go to the inference thread in arrival order, each answered by one output;
 * a tensor-parallel step sends its partial sums out on the same stream and waits for the coordinator's sums, which
 * arrive here as {@link ReduceResult}s (handed over through a queue, since the inference thread is blocked in the
 * step meanwhile). When the stream ends, a step waiting for a sum fails instead of hanging.
 */
final class StepStream implements Exchange {
    private static final ReduceResult CLOSED = ReduceResult.newBuilder().setIndex(-1).build();

    private final ShardHolder shard;
    private final MultiEmitter<? super StepResponse> out;
    private final Duration reduceTimeout;
    private final BlockingQueue<ReduceResult> sums = new LinkedBlockingQueue<>();
    private CompletableFuture<Void> last = CompletableFuture.completedFuture(null); // the newest batch's answer

    private StepStream(ShardHolder shard, MultiEmitter<? super StepResponse> out, Duration reduceTimeout) {
        this.shard = shard;
        this.out = out;
        this.reduceTimeout = reduceTimeout;
    }

    static Multi<StepResponse> serve(ShardHolder shard, Multi<StepRequest> requests, Duration reduceTimeout) {
        return Multi.createFrom().emitter(em -> {
            StepStream s = new StepStream(shard, em, reduceTimeout);
            var subscription = requests.subscribe().with(s::onRequest, failure -> s.abort(), s::end);
            em.onTermination(() -> {
                subscription.cancel();
                s.sums.offer(CLOSED);
            });
        });
    }

    private void onRequest(StepRequest r) {
        switch (r.getKindCase()) {
            case BATCH -> last = batch(r.getBatch());
            case REDUCED -> sums.offer(r.getReduced());
            case KIND_NOT_SET -> out.fail(new IllegalArgumentException("empty step request"));
        }
    }

    /** Runs a wire batch in arrival order; one that is malformed is answered, in its turn, with the reason. */
    private CompletableFuture<Void> batch(ml.juno.node.v1.StepBatch wire) {
        StepBatch batch;
        try {
            batch = ProtoMapping.fromProto(wire);
        } catch (IllegalArgumentException e) {
            StepOutput error = StepOutput.newBuilder().setStepId(wire.getStepId()).setError(e.getMessage()).build();
            return last.thenRun(() -> out.emit(StepResponse.newBuilder().setOutput(error).build()));
        }
        return shard.step(batch, wire.getActivations(), this).thenAccept(o -> out.emit(StepResponse.newBuilder().setOutput(o).build()));
    }

    /** The coordinator finished sending: answer what is in flight, then complete. */
    private void end() {
        last.whenComplete((ignored, e) -> {
            sums.offer(CLOSED);
            out.complete();
        });
    }

    /** The coordinator's side failed or was cancelled: a step waiting for a sum fails at once. */
    private void abort() {
        sums.offer(CLOSED);
        out.complete();
    }

    @Override
    public void allReduce(long stepId, int index, float[] x, int rows, int width) {
        ActivationCodec c = shard.codec();
        out.emit(StepResponse.newBuilder().setPartial(ReducePart.newBuilder().setStepId(stepId).setIndex(index)
                .setPartial(ProtoMapping.encode(c, x, 0, rows, width))).build());
        ReduceResult sum;
        try {
            sum = sums.poll(reduceTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for all-reduce " + index + " of step " + stepId);
        }
        if (sum == null) {
            throw new IllegalStateException("all-reduce " + index + " of step " + stepId + ": no sum within " + reduceTimeout);
        }
        if (sum == CLOSED) {
            sums.offer(CLOSED);
            throw new IllegalStateException("step stream closed during all-reduce " + index + " of step " + stepId);
        }
        if (sum.getStepId() != stepId || sum.getIndex() != index) {
            throw new IllegalStateException("expected the sum of all-reduce " + index + " of step " + stepId + ", got "
                    + sum.getIndex() + " of step " + sum.getStepId());
        }
        if (ProtoMapping.rows(sum.getSum()) != rows || ProtoMapping.cols(sum.getSum()) != width) {
            throw new IllegalStateException("all-reduce sum of shape " + sum.getSum().getShapeList() + ", expected [" + rows + ", " + width + "]");
        }
        ProtoMapping.decode(sum.getSum(), x, 0);
    }
}
