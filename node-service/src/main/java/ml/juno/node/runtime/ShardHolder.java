package ml.juno.node.runtime;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicReference;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.shard.ShardPhase;
import ml.juno.model.shard.ShardSummary;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.Activations;
import ml.juno.model.wire.ShardOutput;
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

    public record State(ShardPhase phase, String message) {}

    private final AtomicReference<State> state = new AtomicReference<>(new State(ShardPhase.EMPTY, "no shard loaded"));
    private final ExecutorService inference = Executors.newSingleThreadExecutor(r -> Thread.ofPlatform().name("juno-node-inference").daemon().unstarted(r));
    private volatile LoadedShard shard; // written on the inference thread only

    @ConfigProperty(name = "juno.node.id")
    String nodeId;

    /** How long a tensor-parallel all-reduce waits for a peer's partial at most. */
    @ConfigProperty(name = "juno.node.reduce-timeout", defaultValue = "30s")
    java.time.Duration reduceTimeout;

    /** The links a tensor slice opens to its peers (gRPC, with this node's certificate under mutual TLS). */
    @jakarta.inject.Inject
    RankReduce.Network peers;

    /** {@code juno node --lora-play}: adapters this node plays on every shard it loads, after the coordinator's. */
    @ConfigProperty(name = "juno.node.lora-play")
    java.util.Optional<List<String>> nodeLoraPlay;

    public State state() {
        return state.get();
    }

    public boolean ready() {
        return state.get().phase() == ShardPhase.READY;
    }

    /** The loaded shard's description, or null. */
    public ShardSummary info() {
        LoadedShard s = shard;
        return s == null ? null : s.info();
    }

    /** The codec of the loaded shard's activations, or null. */
    public ActivationCodec codec() {
        LoadedShard s = shard;
        return s == null ? null : s.codec();
    }

    /** Replaces the shard (the old one is closed first); completes exceptionally with the reason on failure. */
    public CompletableFuture<ShardSummary> load(ShardLoad request) {
        return CompletableFuture.supplyAsync(() -> {
            state.set(new State(ShardPhase.LOADING, "loading " + request.modelPath()));
            unload();
            try {
                LoadedShard s = LoadedShard.load(withNodeAdapters(request, nodeLoraPlay.orElse(List.of())), nodeId, peers, reduceTimeout);
                shard = s;
                state.set(new State(ShardPhase.READY, "serving " + s.info().describe()));
                LOG.infof("loaded %s in %d ms; backend %s (%s)", s.info().describe(), s.info().loadMillis(),
                        s.info().backend(), s.info().isa());
                return s.info();
            } catch (Exception | OutOfMemoryError e) {
                String why = "cannot load " + request.modelPath() + ": " + (e.getMessage() != null ? e.getMessage() : e.toString());
                state.set(new State(ShardPhase.FAILED, why));
                LOG.error(why, e);
                throw new ShardLoadException(why, e);
            }
        }, inference);
    }

    /**
     * The request with this node's own {@code --lora-play} adapters ({@code PATH[:SCALE]} each) appended to the ones the
     * coordinator sent; all of them are summed into every row. A malformed entry is an {@link IllegalArgumentException}.
     */
    static ShardLoad withNodeAdapters(ShardLoad r, List<String> specs) {
        if (specs.isEmpty()) {
            return r;
        }
        List<ShardLoad.Lora> play = new java.util.ArrayList<>(r.loraPlay());
        for (String spec : specs) {
            ml.juno.engine.lora.LoraAdapters.Spec s = ml.juno.engine.lora.LoraAdapters.Spec.parse(spec.strip());
            play.add(new ShardLoad.Lora(s.path().toAbsolutePath().toString(), s.scale()));
        }
        LOG.infof("playing this node's adapters on every row, after the coordinator's: %s", String.join(", ", specs));
        return new ShardLoad(r.modelPath(), r.partition(), r.dtype(), r.order(), r.contextLength(), r.maxSequences(),
                r.maxBatchTokens(), r.kvBlockSize(), r.kvBlocks(), r.kvType(), r.threads(), play, r.loraModules());
    }

    /**
     * Runs one batch on the inference thread; never completes exceptionally (errors are in the output).
     *
     * @param activations the previous stage's hidden states, for a shard that does not embed (null otherwise)
     * @param cancelled   true once the coordinator gave up on the step (its stream ended): an all-reduce stops waiting
     */
    public CompletableFuture<ShardOutput> step(StepBatch batch, Activations activations, java.util.function.BooleanSupplier cancelled) {
        return step(batch, activations, false, 0, List.of(), cancelled);
    }

    /**
     * {@link #step(StepBatch, Activations, java.util.function.BooleanSupplier)}, the input rows taken from the previous
     * stage's stream when {@code fromPeer} (the rows of micro-batch {@code microBatch} of the step), and the logit rows {@code draws} names drawn here (one entry per logit row;
     * null entries and an empty list: answer logits).
     */
    public CompletableFuture<ShardOutput> step(StepBatch batch, Activations activations, boolean fromPeer, int microBatch,
                                               List<ml.juno.engine.sampling.RowDraw> draws, java.util.function.BooleanSupplier cancelled) {
        return CompletableFuture.supplyAsync(() -> {
            LoadedShard s = shard;
            if (s == null) {
                return ShardOutput.failed(batch.stepId(), "no shard loaded: " + state.get().message());
            }
            return s.step(batch, activations, fromPeer, microBatch, draws, cancelled);
        }, inference);
    }

    /**
     * A tensor-parallel peer's partial (a gRPC thread).
     *
     * @throws IllegalArgumentException this node serves no tensor slice, or not one of that partial's group
     */
    public void peerPartial(RankReduce.Partial p) {
        LoadedShard s = shard;
        RankReduce r = s == null ? null : s.ranks();
        StageLink stage = s == null ? null : s.stage();
        if (stage != null) {
            stage.receive(p);
            return;
        }
        if (r == null) {
            throw new IllegalArgumentException("partial of group " + p.group() + " from rank " + p.fromRank()
                    + ", but this node serves no tensor-parallel slice or pipeline stage with neighbours (" + state.get().message() + ")");
        }
        r.receive(p);
    }

    /** The stream from a peer of group {@code group} ended (a gRPC thread): a wait for its partial fails now. */
    public void peerEnded(long group, int rank, String why) {
        LoadedShard s = shard;
        RankReduce r = s == null ? null : s.ranks();
        if (r != null && r.shard().group() == group) {
            r.ended(rank, why);
        }
        StageLink stage = s == null ? null : s.stage();
        if (stage != null && stage.stage().group() == group) {
            stage.ended(rank, why);
        }
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
