package ml.juno.node.grpc;

import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.subscription.MultiEmitter;
import java.util.concurrent.CompletableFuture;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.shm.ControlChannel;
import ml.juno.model.wire.Activations;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.model.wire.ShardOutput;
import ml.juno.node.runtime.ShardHolder;
import ml.juno.node.v1.ControlAttach;
import ml.juno.node.v1.ControlAttached;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.StepResponse;
import org.jboss.logging.Logger;

/**
 * One coordinator's step stream. Batches go to the inference thread in arrival order, each answered by one output. When
 * the coordinator ends or cancels the stream, a tensor-parallel step still waiting for its peers' partials, or a
 * pipeline stage waiting for its previous stage's rows, stops waiting ({@link #cancelled}) instead of holding the
 * inference thread.
 *
 * <p>A coordinator on this host may open the stream with an attach: the later batches then come, and their answers go,
 * through a shared-memory {@link ControlChannel} that a thread of this stream reads, while the stream stays open for its
 * end. The node says on the stream whether it attached.
 */
final class StepStream {
    private static final Logger LOG = Logger.getLogger(StepStream.class);
    /** How long an answer waits while the coordinator's shared-memory inbox is full (it reads every answer). */
    private static final long CONTROL_SEND_NANOS = 60_000_000_000L;

    private final ShardHolder shard;
    private final MultiEmitter<? super StepResponse> out;
    private volatile boolean cancelled;
    private volatile ControlChannel control;
    private boolean started; // a message came (the attach is only a stream's first)
    private volatile CompletableFuture<Void> last = CompletableFuture.completedFuture(null); // the newest batch's answer (the channel's reader writes it too)

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
                s.stop();
            });
        });
    }

    private void onRequest(StepRequest r) {
        boolean first = !started;
        started = true;
        switch (r.getKindCase()) {
            case BATCH -> last = batch(r.getBatch());
            case ATTACH -> {
                if (first) {
                    attach(r.getAttach());
                } else {
                    out.fail(new IllegalArgumentException("a shared-memory attach comes only as a step stream's first message"));
                }
            }
            case KIND_NOT_SET -> out.fail(new IllegalArgumentException("empty step request"));
        }
    }

    /** Maps the coordinator's channel where it is on this host and answers on the stream whether it did. */
    private void attach(ControlAttach a) {
        ControlChannel c = ControlChannel.attach(a.getName(), a.getHost());
        if (c == null) {
            String why = !ControlChannel.usable() ? "shared memory is off or unusable on the node"
                    : "the node is not on the coordinator's host, or cannot map " + a.getName();
            out.emit(StepResponse.newBuilder().setAttached(ControlAttached.newBuilder().setAttached(false).setReason(why)).build());
            return;
        }
        control = c;
        out.emit(StepResponse.newBuilder().setAttached(ControlAttached.newBuilder().setAttached(true)).build());
        Thread.ofPlatform().daemon().name("juno-step-shm").start(() -> readControl(c));
    }

    /** The channel's reader: each request as if it came on the stream, until the stream or the coordinator ends. */
    private void readControl(ControlChannel c) {
        java.util.function.BooleanSupplier stop = () -> cancelled;
        try {
            while (!cancelled) {
                byte[] m = c.receive(System.nanoTime() + 1_000_000_000L, stop);
                if (m == null) {
                    if (c.peerGone()) {
                        break;
                    }
                    continue;
                }
                StepRequest r = StepRequest.parseFrom(m);
                if (!r.hasBatch()) {
                    throw new IllegalArgumentException("a step request through shared memory holds no batch (" + r.getKindCase() + ")");
                }
                last = batch(r.getBatch());
            }
        } catch (com.google.protobuf.InvalidProtocolBufferException | RuntimeException e) {
            LOG.warnf("step stream: the coordinator's shared-memory channel failed: %s", e.getMessage());
            cancelled = true;
            out.fail(e instanceof com.google.protobuf.InvalidProtocolBufferException ? new IllegalArgumentException(
                    "malformed step request through shared memory: " + e.getMessage(), e) : e);
        } finally {
            c.close();
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
            return last.thenRun(() -> answer(StepResponse.newBuilder().setOutput(error).build()));
        }
        return shard.step(batch, activations, wire.getActivationsFromPeer(), wire.getMicroBatch(), draws, () -> cancelled)
                .thenAccept(o -> answer(StepResponse.newBuilder().setOutput(ProtoMapping.toProto(o)).build()));
    }

    /** Sends an answer the way its request came: through the channel once attached, on the stream before. */
    private void answer(StepResponse r) {
        ControlChannel c = control;
        if (c == null) {
            out.emit(r);
            return;
        }
        try {
            c.send(r.toByteArray(), System.nanoTime() + CONTROL_SEND_NANOS);
        } catch (IllegalStateException e) {
            if (!cancelled) { // the coordinator left or stopped reading: the stream ends with the reason
                stop();
                out.fail(e);
            }
        }
    }

    /** The coordinator finished sending: answer what is in flight, then complete. */
    private void end() {
        last.whenComplete((ignored, e) -> {
            stop();
            out.complete();
        });
    }

    /** The coordinator's side failed or was cancelled: a step waiting for its peers stops at once. */
    private void abort() {
        stop();
        out.complete();
    }

    /** Stops the stream's waits: a step waiting for its peers, and the channel's reader (which then leaves the channel). */
    private void stop() {
        cancelled = true;
        ControlChannel c = control;
        if (c != null) {
            c.wake();
        }
    }
}
