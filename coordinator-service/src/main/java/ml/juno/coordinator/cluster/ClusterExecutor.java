package ml.juno.coordinator.cluster;

import java.io.IOException;
import java.util.List;
import ml.juno.coordinator.engine.BackendInfo;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.ExecutorFactory;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.engine.LogitsObserver;
import ml.juno.coordinator.engine.ManagedExecutor;
import ml.juno.coordinator.engine.SamplingStage;
import ml.juno.coordinator.scheduler.ScheduledRow;
import ml.juno.coordinator.scheduler.StepPlan;
import ml.juno.coordinator.scheduler.StepResult;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.sampling.DrawResult;
import ml.juno.engine.sampling.RowDraw;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.shard.ShardAssignment;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.KvElement;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepResponse;
import ml.juno.node.v1.Tensor;

/**
 * Runs step plans on node processes ({@link NodeCluster}: links, deadlines, health, reconnect, failure policy). The
 * plan goes out as its {@link StepBatch} with the draws of its rows ({@link #draws}): the node that computes the logits
 * (the last stage, tensor rank 0) draws the tokens itself and answers them; the rows only the coordinator can draw (a
 * grammar, a scored prompt) come back as logits and are sampled here ({@link SamplingStage}). What travels between the
 * nodes is the subclass's: {@link PipelineExecutor} (stage to stage) or {@link TensorParallelExecutor} (every rank; the
 * ranks all-reduce among themselves).
 */
public abstract sealed class ClusterExecutor implements ManagedExecutor permits PipelineExecutor, TensorParallelExecutor {
    final NodeCluster cluster;
    private final SamplingStage sampling;
    private final int vocab;
    private float[] logits = new float[0];
    private float[] hidden = new float[0]; // [rows][embedding] final hidden states of the last step's embedding rows
    private volatile long steps;
    private volatile long tokens;
    private volatile long prefill;

    @Override
    public ml.juno.coordinator.engine.Topology topology() {
        return cluster.topology();
    }

    ClusterExecutor(NodeCluster cluster, int vocab) {
        this.cluster = cluster;
        this.vocab = vocab;
        this.sampling = new SamplingStage(vocab);
    }

    /** Builds the executor of an engine over {@code cluster}, with the engine's slots, batch and KV settings. */
    public static ExecutorFactory factory(ClusterConfig cluster, EngineConfig engine) {
        return factory(cluster, engine, ml.juno.coordinator.engine.EngineLora.NONE);
    }

    /**
     * {@link #factory(ClusterConfig, EngineConfig)} with LoRA adapters every node plays (its layers, or its tensor
     * slice); the files must be readable on the nodes at the same paths, like the model.
     */
    public static ExecutorFactory factory(ClusterConfig cluster, EngineConfig engine, ml.juno.coordinator.engine.EngineLora lora) {
        return (file, model, context, kvBlocks) -> open(cluster, engine, file, model, context, kvBlocks, lora);
    }

    static ClusterExecutor open(ClusterConfig config, EngineConfig engine, GgufFile file, ModelConfig model, int context,
                                int kvBlocks) throws IOException {
        return open(config, engine, file, model, context, kvBlocks, ml.juno.coordinator.engine.EngineLora.NONE);
    }

    static ClusterExecutor open(ClusterConfig config, EngineConfig engine, GgufFile file, ModelConfig model, int context,
                                int kvBlocks, ml.juno.coordinator.engine.EngineLora lora) throws IOException {
        for (var spec : lora.play()) {
            ml.juno.engine.lora.LoraAdapters.load(spec.path(), file); // refused here, before any node loads
        }
        for (var m : lora.modules()) {
            ml.juno.engine.lora.LoraAdapters.load(m.path(), file);
        }
        int layers = model.dims().layers();
        int n = config.nodes().size();
        // impossible layouts are refused here, before any node is asked to load (the engine exits on them at start)
        if (config.parallelism() == Parallelism.PIPELINE && n > layers) {
            throw new IllegalArgumentException("cannot split the model's " + layers + " layers over " + n
                    + " pipeline nodes: use at most " + layers + " nodes");
        }
        if (config.parallelism() == Parallelism.TENSOR) {
            ml.juno.engine.model.ShardTensors.requireSplittable(model, n);
        }
        List<ShardAssignment> assignments = config.parallelism() == Parallelism.PIPELINE
                ? ShardAssignment.pipeline(layerBytes(file, layers), headBytes(file), n)
                : ShardAssignment.tensor(layers, n);
        LoadShardRequest base = LoadShardRequest.newBuilder()
                .setModelPath(engine.modelPath().toAbsolutePath().toString())
                .setActivationDtype(ProtoMapping.toProto(config.wire().dtype()))
                .setByteOrder(ProtoMapping.toProto(config.wire().order()))
                .setContextLength(context)
                .setMaxSequences(engine.maxSequences())
                .setMaxBatchTokens(engine.maxBatchTokens())
                .setKvBlockSize(InferenceEngine.KV_BLOCK_SIZE)
                .setKvBlocks(kvBlocks)
                .setKvElement(engine.kvType() == KvType.F16 ? KvElement.KV_ELEMENT_F16 : KvElement.KV_ELEMENT_F32)
                .setThreads(config.threadsPerNode())
                .addAllLoraPlay(lora.play().stream().map(l -> ml.juno.node.v1.LoraPlay.newBuilder()
                        .setPath(l.path().toAbsolutePath().toString()).setScale(l.scale()).build()).toList())
                .addAllLoraModules(lora.modules().stream().map(m -> ml.juno.node.v1.LoraPlay.newBuilder()
                        .setPath(m.path().toAbsolutePath().toString()).setScale(1f).build()).toList())
                .build();
        NodeCluster cluster = new NodeCluster(config, assignments, base);
        try {
            cluster.start();
        } catch (NodeFailure e) {
            cluster.close();
            throw new IOException(e.getMessage());
        } catch (RuntimeException e) {
            cluster.close();
            throw e;
        }
        int vocab = model.dims().vocab();
        return config.parallelism() == Parallelism.PIPELINE ? new PipelineExecutor(cluster, vocab)
                : new TensorParallelExecutor(cluster, vocab);
    }

    /** Weight bytes of each layer ({@code blk.N.*} tensors), for balancing pipeline stages. */
    static long[] layerBytes(GgufFile file, int layers) {
        long[] bytes = new long[layers];
        for (GgufTensorInfo t : file.tensors()) {
            int l = TensorNames.layerOf(t.name());
            if (l >= 0 && l < layers) {
                bytes[l] += t.byteSize();
            }
        }
        return bytes;
    }

    /**
     * The bytes of the output head the last stage multiplies every logit row by: {@code output.weight}, or the token
     * embeddings where the model ties them (no {@code output.weight}).
     */
    static long headBytes(GgufFile file) {
        long embeddings = 0;
        for (GgufTensorInfo t : file.tensors()) {
            if (t.name().equals(TensorNames.global(TensorNames.OUTPUT))) {
                return t.byteSize();
            }
            if (t.name().equals(TensorNames.global(TensorNames.TOKEN_EMBD))) {
                embeddings = t.byteSize();
            }
        }
        return embeddings;
    }

    /** The shards the nodes serve, in node order. */
    public List<ShardAssignment> assignments() {
        return cluster.assignments();
    }

    @Override
    public final StepResult execute(StepPlan plan) {
        StepResult r = cluster.run(plan, this::run);
        if (r instanceof StepResult.Tokens) {
            steps++;
        }
        return r;
    }

    /** One step with the nodes; a node's failure is thrown, the cluster applies its policy. */
    abstract StepResult run(StepPlan plan) throws NodeFailure;

    /** Steps in flight at most: 1 unless a subclass sends steps without waiting ({@link #send} / {@link #receive}). */
    @Override
    public int stepsInFlight() {
        return 1;
    }

    /** What {@link #begin} found already: a step that failed before it was sent (null when it went). */
    private final java.util.IdentityHashMap<StepPlan, StepResult> unsent = new java.util.IdentityHashMap<>();

    private int outstanding;           // steps begun and not finished (the loop's thread)
    private volatile long overlapped;  // steps begun while an earlier one was still outstanding

    @Override
    public final void begin(StepPlan plan) {
        if (outstanding++ > 0) {
            overlapped++;
        }
        StepResult failed = cluster.send(plan, this::send);
        if (failed != null) {
            forget(plan);
            unsent.put(plan, failed);
        }
    }

    @Override
    public final StepResult finish(StepPlan plan) {
        outstanding--;
        StepResult failed = unsent.remove(plan);
        if (failed == null) {
            String stale = staleFailure(plan);
            if (stale != null) {
                cluster.releaseQuietly(plan);
                return new StepResult.Failure(stale);
            }
        }
        StepResult r = failed != null ? failed : cluster.receive(plan, this::receive);
        if (failed == null && r instanceof StepResult.Failure) {
            forget(plan);
        }
        if (r instanceof StepResult.Tokens) {
            steps++;
        }
        return r;
    }

    /** Sends {@code plan}'s step without waiting (the first half of {@link #run}); only where {@link #stepsInFlight()} > 1. */
    void send(StepPlan plan) throws NodeFailure {
        throw new UnsupportedOperationException("one step at a time");
    }

    /** Waits for the answers to {@code plan}, the oldest step {@link #send} sent. */
    StepResult receive(StepPlan plan) throws NodeFailure {
        throw new UnsupportedOperationException("one step at a time");
    }

    /** Why the oldest step {@link #send} sent can no longer be answered, found without the cluster's lock; null: it may be. */
    String staleFailure(StepPlan plan) {
        return null;
    }

    /** Drops what {@link #send} kept of {@code plan} (it failed before it was answered). */
    void forget(StepPlan plan) {
    }

    /** The plan as a {@link StepBatch}; counts its prefill tokens. */
    final StepBatch batch(StepPlan plan) {
        for (ScheduledRow row : plan.rows()) {
            if (row.tokenCount() > 1) {
                prefill += row.tokenCount();
            }
        }
        return plan.batch();
    }

    /** The node's answer to step {@code stepId}, or why it is none. */
    static StepOutput output(NodeLink link, StepResponse r, long stepId) throws NodeFailure {
        if (!r.hasOutput()) {
            throw new NodeFailure(link, "node " + link.address + " sent no step output (" + r.getKindCase() + ")", true);
        }
        StepOutput o = r.getOutput();
        if (!o.getError().isEmpty()) {
            throw new NodeFailure(link, "node " + link.address + ": " + o.getError(), true);
        }
        if (o.getStepId() != stepId) {
            throw new NodeFailure(link, "node " + link.address + " answered step " + o.getStepId() + " for step " + stepId, true);
        }
        return o;
    }

    /**
     * What the node that computes the logits draws itself, one entry per logit row of the plan (null: it answers that
     * row's logits and the coordinator draws): every sampling row but those under a grammar (its mask needs the
     * coordinator's matcher and tokenizer trie); a scored prompt token's logits always come back (scoring is cheap and
     * rare). Empty (every row's logits come back) when no row is drawn there, when the cluster runs the coordinator-hub
     * path ({@code -Djuno.cluster.hub=true}) or when an observer watches the raw logits.
     */
    final List<RowDraw> draws(StepPlan plan) {
        if (cluster.hub() || sampling.observed()) {
            return List.of();
        }
        List<RowDraw> out = new java.util.ArrayList<>(plan.logitRowCount());
        boolean any = false;
        for (ScheduledRow row : plan.rows()) {
            for (int i = row.chunk().scored().length; i > 0; i--) {
                out.add(null);
            }
            if (row.needsLogits()) {
                boolean here = row.sampler().drawsAnywhere();
                out.add(here ? row.sampler().rowDraw() : null);
                any |= here;
            }
        }
        return any ? out : List.of();
    }

    /** The tokens the node drew and the logits it answered for the rest, checked and sampled. */
    final StepResult sample(NodeLink link, StepOutput o, StepPlan plan, List<RowDraw> draws) throws NodeFailure {
        int elsewhere = 0;
        for (RowDraw d : draws) {
            elsewhere += d != null ? 1 : 0;
        }
        int want = plan.logitRowCount() - elsewhere;
        if (o.getSampledCount() != elsewhere) {
            throw new NodeFailure(link, "node " + link.address + " drew " + o.getSampledCount() + " rows of step " + plan.stepId()
                    + ", expected " + elsewhere + " (a node of an older Juno?)", true);
        }
        Tensor t = o.getLogits();
        if (want > 0 && (!o.hasLogits() || ProtoMapping.rows(t) != want || ProtoMapping.cols(t) != vocab)) {
            throw new NodeFailure(link, "node " + link.address + " answered logits shaped " + t.getShapeList() + ", expected ["
                    + want + ", " + vocab + "]", true);
        }
        if (logits.length < want * vocab) {
            logits = new float[want * vocab];
        }
        if (want > 0) {
            ProtoMapping.decode(t, logits, 0);
        }
        DrawResult[] drawn = null;
        if (elsewhere > 0) {
            drawn = new DrawResult[plan.sampledRowCount()];
            int s = 0;
            int k = 0; // logit row
            int got = 0;
            for (ScheduledRow row : plan.rows()) {
                k += row.chunk().scored().length;
                if (!row.needsLogits()) {
                    continue;
                }
                if (draws.get(k) != null) {
                    try {
                        drawn[s] = ProtoMapping.fromProto(o.getSampled(got++));
                    } catch (IllegalArgumentException e) {
                        throw new NodeFailure(link, "node " + link.address + ": " + e.getMessage(), true);
                    }
                }
                k++;
                s++;
            }
        }
        tokens += plan.totalTokens();
        StepResult.Tokens sampled = sampling.sample(plan, logits, want, drawn);
        int hiddenRows = plan.hiddenRowCount();
        if (hiddenRows == 0) {
            return sampled;
        }
        Tensor h = o.getHidden();
        if (!o.hasHidden() || ProtoMapping.rows(h) != hiddenRows || ProtoMapping.cols(h) <= 0) {
            throw new NodeFailure(link, "node " + link.address + " answered final hidden states shaped " + h.getShapeList()
                    + ", expected [" + hiddenRows + ", embedding] (a node of an older Juno?)", true);
        }
        int dim = ProtoMapping.cols(h);
        if (hidden.length < hiddenRows * dim) {
            hidden = new float[hiddenRows * dim];
        }
        ProtoMapping.decode(h, hidden, 0);
        return sampled.withHidden(new StepResult.Hidden(hidden, hiddenRows, dim));
    }

    public final ClusterStats stats() {
        return cluster.stats(steps, tokens, overlapped);
    }

    @Override
    public final BackendInfo backend() {
        return cluster.backend();
    }

    @Override
    public final boolean healthy() {
        return cluster.healthy();
    }

    @Override
    public final String healthMessage() {
        return cluster.healthMessage();
    }

    @Override
    public final long kvEpoch() {
        return cluster.kvEpoch();
    }

    @Override
    public final void observeLogits(LogitsObserver o) {
        sampling.observeLogits(o);
    }

    @Override
    public final long prefillTokens() {
        return prefill;
    }

    @Override
    public final long steps() {
        return steps;
    }

    @Override
    public final void close() {
        cluster.close();
    }
}
