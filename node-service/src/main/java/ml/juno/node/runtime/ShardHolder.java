package ml.juno.node.runtime;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import ml.juno.engine.step.StepBatch;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.ShardInfo;
import ml.juno.node.v1.ShardState;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.Tensor;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Owns the shard this node serves and the node's one inference thread. A node starts empty (and therefore not
 * ready); loading a shard on request moves it to READY, or to FAILED with the reason. Nothing here ever pretends a
 * shard is loaded: a step on a node without a shard answers an error. Loads, steps and releases all run on the
 * inference thread, in the order they arrive.
 */
@ApplicationScoped
public class ShardHolder {

    private static final Logger LOG = Logger.getLogger(ShardHolder.class);

    public record State(ShardState state, String message) {}

    private final AtomicReference<State> state = new AtomicReference<>(new State(ShardState.SHARD_STATE_EMPTY, "no shard loaded"));
    private final ExecutorService inference = Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().name("juno-node-inference").daemon().unstarted(r));
    private volatile LoadedShard shard; // written on the inference thread only

    @ConfigProperty(name = "juno.node.id")
    String nodeId;

    public State state() {
        return state.get();
    }

    public boolean ready() {
        return state.get().state() == ShardState.SHARD_STATE_READY;
    }

    /** The loaded shard's description, or null. */
    public ShardInfo info() {
        LoadedShard s = shard;
        return s == null ? null : s.info();
    }

    /** The codec of the loaded shard's activations, or null. */
    public ml.juno.model.wire.ActivationCodec codec() {
        LoadedShard s = shard;
        return s == null ? null : s.codec();
    }

    /** Replaces the shard (the old one is closed first); completes exceptionally with the reason on failure. */
    public CompletableFuture<ShardInfo> load(LoadShardRequest request) {
        return CompletableFuture.supplyAsync(() -> {
            state.set(new State(ShardState.SHARD_STATE_LOADING, "loading " + request.getModelPath()));
            unload();
            try {
                LoadedShard s = LoadedShard.load(request, nodeId);
                shard = s;
                state.set(new State(ShardState.SHARD_STATE_READY, "serving " + describe(s.info())));
                LOG.infof("loaded %s in %d ms; backend %s (%s)", describe(s.info()), s.info().getLoadMillis(),
                        s.info().getBackend(), s.info().getIsa());
                return s.info();
            } catch (Exception | OutOfMemoryError e) {
                String why = "cannot load " + request.getModelPath() + ": " + (e.getMessage() != null ? e.getMessage() : e.toString());
                state.set(new State(ShardState.SHARD_STATE_FAILED, why));
                LOG.error(why, e);
                throw new ShardLoadException(why, e);
            }
        }, inference);
    }

    private static String describe(ShardInfo i) {
        return i.getWorldSize() > 1 ? "tensor slice " + i.getTensorRank() + "/" + i.getWorldSize() + " of " + i.getModelLayers() + " layers"
                : "layers [" + i.getFirstLayer() + ", " + i.getEndLayer() + ") of " + i.getModelLayers();
    }

    /** Runs one batch on the inference thread; never completes exceptionally (errors are in the output). */
    public CompletableFuture<StepOutput> step(StepBatch batch, Tensor activations, Exchange exchange) {
        return CompletableFuture.supplyAsync(() -> {
            LoadedShard s = shard;
            if (s == null) {
                return StepOutput.newBuilder().setStepId(batch.stepId()).setError("no shard loaded: " + state.get().message()).build();
            }
            return s.step(batch, activations, exchange);
        }, inference);
    }

    /** Frees the KV of sequence slots (their block tables); the count of slots released. */
    public CompletableFuture<Integer> release(List<Integer> slots) {
        return CompletableFuture.supplyAsync(() -> {
            LoadedShard s = shard;
            return s == null ? 0 : s.release(slots);
        }, inference);
    }

    private void unload() {
        LoadedShard old = shard;
        shard = null;
        if (old != null) {
            old.close();
        }
    }

    @PreDestroy
    void close() {
        inference.submit(this::unload);
        inference.shutdown();
    }

    /** A shard that could not be loaded, with the reason. */
    public static final class ShardLoadException extends RuntimeException {
        ShardLoadException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
