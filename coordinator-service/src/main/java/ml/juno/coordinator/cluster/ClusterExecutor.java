package ml.juno.coordinator.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
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
import ml.juno.coordinator.scheduler.TokenChunk;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.TensorNames;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.ModelConfig;
import ml.juno.model.shard.ShardAssignment;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.BlockTable;
import ml.juno.node.v1.KvElement;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.ReducePart;
import ml.juno.node.v1.ReduceResult;
import ml.juno.node.v1.ShardInfo;
import ml.juno.node.v1.ShardState;
import ml.juno.node.v1.StepBatch;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.StepResponse;
import ml.juno.node.v1.Tensor;
import org.jboss.logging.Logger;

/**
 * Runs step plans on node processes. Pipeline: the batch goes to the first stage with token ids, each stage's hidden
 * states go (through the coordinator) to the next, the last stage answers the logits of the rows that need them.
 * Tensor: the batch goes to every rank; each all-reduce of the step arrives as one partial per rank, the coordinator
 * sums them in rank order and sends the sum back on every stream; rank 0 answers the logits. The logits are sampled
 * here, as they arrive ({@link SamplingStage}), until the last node samples itself.
 *
 * <p>Every wait has a deadline. A node that fails (stream broken, deadline passed) is marked down; the step fails (its
 * requests end with an error), the step's slots are released on the other nodes, and steps fail fast while a node is
 * down. A health thread pings the nodes, reconnects a node that comes back and loads its shard again; then the cluster
 * serves again. Steps run on the generation loop's thread; the health thread takes the same lock, between steps.
 */
public final class ClusterExecutor implements ManagedExecutor {
    private static final Logger LOG = Logger.getLogger(ClusterExecutor.class);
    private static final long HEALTH_PERIOD_MS = 500;
    private static final long PING_EVERY_MS = 2000;

    private final ClusterConfig config;
    private final List<NodeLink> links = new ArrayList<>();
    private final List<ShardAssignment> assignments;
    private final LoadShardRequest base;
    private final ActivationCodec codec;
    private final SamplingStage sampling;
    private final int vocab;
    private final ReentrantLock lock = new ReentrantLock();
    private final Thread health;
    private volatile boolean closed;
    private float[] logits = new float[0];
    private float[] sum = new float[0];
    private float[] part = new float[0];
    private volatile long steps;
    private volatile long tokens;
    private volatile long prefill;
    private volatile long reductions;
    private long lastPing;

    private ClusterExecutor(ClusterConfig config, List<ShardAssignment> assignments, LoadShardRequest base, int vocab) {
        this.config = config;
        this.assignments = assignments;
        this.base = base;
        this.vocab = vocab;
        this.sampling = new SamplingStage(vocab);
        this.codec = ProtoMapping.codec(config.wire().dtype(), config.wire().order());
        for (int i = 0; i < config.nodes().size(); i++) {
            links.add(new NodeLink(config.nodes().get(i), i));
        }
        this.health = Thread.ofPlatform().name("juno-cluster-health").daemon().unstarted(this::healthLoop);
    }

    /** Builds the executor of an engine over {@code cluster}, with the engine's slots, batch and KV settings. */
    public static ExecutorFactory factory(ClusterConfig cluster, EngineConfig engine) {
        return (file, model, context, kvBlocks) -> open(cluster, engine, file, model, context, kvBlocks);
    }

    static ClusterExecutor open(ClusterConfig cluster, EngineConfig engine, GgufFile file, ModelConfig model, int context,
                                int kvBlocks) throws IOException {
        int layers = model.dims().layers();
        int n = cluster.nodes().size();
        List<ShardAssignment> assignments = cluster.parallelism() == Parallelism.PIPELINE
                ? ShardAssignment.pipeline(layerBytes(file, layers), n)
                : ShardAssignment.tensor(layers, n);
        LoadShardRequest base = LoadShardRequest.newBuilder()
                .setModelPath(engine.modelPath().toAbsolutePath().toString())
                .setActivationDtype(ProtoMapping.toProto(cluster.wire().dtype()))
                .setByteOrder(ProtoMapping.toProto(cluster.wire().order()))
                .setContextLength(context)
                .setMaxSequences(engine.maxSequences())
                .setMaxBatchTokens(engine.maxBatchTokens())
                .setKvBlockSize(InferenceEngine.KV_BLOCK_SIZE)
                .setKvBlocks(kvBlocks)
                .setKvElement(engine.kvType() == KvType.F16 ? KvElement.KV_ELEMENT_F16 : KvElement.KV_ELEMENT_F32)
                .setThreads(cluster.threadsPerNode())
                .build();
        ClusterExecutor ex = new ClusterExecutor(cluster, assignments, base, model.dims().vocab());
        try {
            ex.connectAll();
        } catch (NodeFailure e) {
            ex.close();
            throw new IOException(e.getMessage());
        } catch (RuntimeException e) {
            ex.close();
            throw e;
        }
        ex.health.start();
        return ex;
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

    /** The shards the nodes serve, in node order. */
    public List<ShardAssignment> assignments() {
        return assignments;
    }

    private LoadShardRequest request(int node) {
        return ProtoMapping.partition(base.toBuilder(), assignments.get(node)).build();
    }

    /** Waits for every node (they may still be starting), then loads every shard; a shard that fails to load is final. */
    private void connectAll() throws NodeFailure {
        long deadline = System.nanoTime() + config.deadlines().connect().toNanos();
        for (NodeLink link : links) {
            while (true) {
                try {
                    link.status(config.deadlines().call());
                    break;
                } catch (NodeFailure e) {
                    if (System.nanoTime() > deadline || closed) {
                        throw new NodeFailure(link, e.getMessage() + " (waited " + config.deadlines().connect() + ")");
                    }
                    sleep(200);
                }
            }
        }
        for (NodeLink link : links) {
            connect(link);
        }
        lastPing = System.nanoTime();
    }

    /** Loads the node's shard (again) and opens its step stream. */
    private void connect(NodeLink link) throws NodeFailure {
        link.status(config.deadlines().call());
        var info = link.load(request(link.index), config.deadlines().load());
        link.openStream();
        link.markUp();
        LOG.infof("node %s serves %s (%d MB weights, %d MB KV, loaded in %d ms; backend %s)", link.address,
                info.getWorldSize() > 1 ? "tensor slice " + info.getTensorRank() + "/" + info.getWorldSize()
                        : "layers [" + info.getFirstLayer() + ", " + info.getEndLayer() + ")",
                info.getWeightBytes() >> 20, info.getKvBytes() >> 20, info.getLoadMillis(), nodeBackend(info));
    }

    /** The nodes' backends as one (each distinct kind and isa once); unknown until a shard is loaded. */
    @Override
    public BackendInfo backend() {
        List<BackendInfo> parts = new ArrayList<>();
        for (NodeLink l : links) {
            ShardInfo s = l.shard;
            if (s != null) {
                parts.add(nodeBackend(s));
            }
        }
        return BackendInfo.combine(parts);
    }

    /** What a node reported for its shard; a node that does not say (an older build) is unknown. */
    static BackendInfo nodeBackend(ShardInfo s) {
        return s.getBackend().isEmpty() ? BackendInfo.UNKNOWN
                : new BackendInfo(s.getBackend(), s.getIsa().isEmpty() ? "unknown" : s.getIsa());
    }

    @Override
    public StepResult execute(StepPlan plan) {
        lock.lock();
        try {
            for (NodeLink l : links) {
                if (!l.isUp()) {
                    return new StepResult.Failure("cluster degraded: node " + l.address + " is down (" + l.downReason() + "); reconnecting");
                }
            }
            try {
                StepResult r = config.parallelism() == Parallelism.PIPELINE ? pipeline(plan) : tensor(plan);
                steps++;
                return r;
            } catch (NodeFailure e) {
                return fail(plan, e);
            } catch (RuntimeException e) {
                return fail(plan, new NodeFailure(null, "step " + plan.stepId() + " failed: " + e, true));
            }
        } finally {
            lock.unlock();
        }
    }

    /** Marks a dead node down, resets the streams a failed step may have left mid-way, releases the slots. */
    private StepResult fail(StepPlan plan, NodeFailure e) {
        NodeLink bad = e.link();
        if (bad != null && !e.nodeAlive()) {
            bad.markDown(e.getMessage());
            LOG.warnf("node %s is down: %s", bad.address, e.getMessage());
        }
        List<Integer> slots = new ArrayList<>();
        for (ScheduledRow r : plan.rows()) {
            slots.add(r.slot());
        }
        for (NodeLink l : links) {
            if (!l.isUp()) {
                continue;
            }
            if (config.parallelism() == Parallelism.TENSOR) {
                l.openStream(); // a rank may wait for a sum that never comes: its old stream is cancelled
            }
            try {
                l.release(slots, config.deadlines().call());
            } catch (NodeFailure f) {
                l.markDown(f.getMessage());
            }
        }
        return new StepResult.Failure(e.getMessage());
    }

    /** The rows of a plan as a wire batch, without token ids or activations. */
    private StepBatch.Builder batch(StepPlan plan, List<Integer> tokenIds) {
        StepBatch.Builder b = StepBatch.newBuilder().setStepId(plan.stepId());
        int logitRows = 0;
        for (ScheduledRow row : plan.rows()) {
            TokenChunk c = row.chunk();
            int[] ids = c.tokenIds();
            int last = ids.length - 1;
            BlockTable.Builder t = BlockTable.newBuilder().setSlot(row.slot());
            for (int blk : row.kv().blockTable()) {
                t.addBlocks(blk);
            }
            b.addBlockTables(t);
            for (int i = 0; i <= last; i++) {
                b.addSlots(row.slot()).addPositions(c.position(i)).addNeedsLogits(c.needsLogits() && i == last);
                tokenIds.add(ids[i]);
            }
            if (ids.length > 1) {
                prefill += ids.length;
            }
            if (c.needsLogits()) {
                logitRows++;
            }
        }
        return b;
    }

    private StepResult pipeline(StepPlan plan) throws NodeFailure {
        List<Integer> ids = new ArrayList<>();
        StepBatch common = batch(plan, ids).build();
        long deadline = System.nanoTime() + config.deadlines().step().toNanos();
        Tensor activations = null;
        for (NodeLink link : links) {
            StepBatch.Builder b = common.toBuilder();
            if (link.index == 0) {
                b.addAllTokenIds(ids);
            } else {
                b.setActivations(activations);
            }
            long t0 = System.nanoTime();
            link.send(StepRequest.newBuilder().setBatch(b).build());
            StepOutput o = output(link, link.receive(deadline, plan.stepId()), plan.stepId());
            link.recordHop(System.nanoTime() - t0, o.getComputeNanos());
            if (link.index == links.size() - 1) {
                return logits(link, o, plan);
            }
            if (!o.hasActivations()) {
                throw new NodeFailure(link, "node " + link.address + " answered step " + plan.stepId() + " without activations", true);
            }
            activations = o.getActivations();
        }
        throw new IllegalStateException("unreachable");
    }

    private StepResult tensor(StepPlan plan) throws NodeFailure {
        List<Integer> ids = new ArrayList<>();
        StepRequest request = StepRequest.newBuilder().setBatch(batch(plan, ids).addAllTokenIds(ids)).build();
        long deadline = System.nanoTime() + config.deadlines().step().toNanos();
        long t0 = System.nanoTime();
        for (NodeLink link : links) {
            link.send(request);
        }
        int n = links.size();
        StepResponse[] got = new StepResponse[n];
        for (int index = 0; ; index++) {
            int outputs = 0;
            for (int i = 0; i < n; i++) {
                got[i] = links.get(i).receive(deadline, plan.stepId());
                if (got[i].hasOutput()) {
                    outputs++;
                    StepOutput o = got[i].getOutput();
                    if (!o.getError().isEmpty()) {
                        throw new NodeFailure(links.get(i), "node " + links.get(i).address + ": " + o.getError(), true);
                    }
                }
            }
            if (outputs == n) {
                long wall = System.nanoTime() - t0;
                for (int i = 0; i < n; i++) {
                    links.get(i).recordHop(wall, got[i].getOutput().getComputeNanos());
                }
                return logits(links.get(0), got[0].getOutput(), plan);
            }
            if (outputs != 0) {
                throw new NodeFailure(null, "tensor-parallel ranks disagree on the number of all-reduces in step " + plan.stepId(), true);
            }
            reduce(got, index, plan.stepId());
        }
    }

    /** Sums the ranks' partials of all-reduce {@code index} in rank order and sends the sum to every rank. */
    private void reduce(StepResponse[] parts, int index, long stepId) throws NodeFailure {
        ReducePart first = parts[0].getPartial();
        int rows = ProtoMapping.rows(first.getPartial());
        int cols = ProtoMapping.cols(first.getPartial());
        int size = rows * cols;
        if (sum.length < size) {
            sum = new float[size];
            part = new float[size];
        }
        for (int i = 0; i < parts.length; i++) {
            ReducePart p = parts[i].getPartial();
            if (p.getStepId() != stepId || p.getIndex() != index
                    || ProtoMapping.rows(p.getPartial()) != rows || ProtoMapping.cols(p.getPartial()) != cols) {
                throw new NodeFailure(links.get(i), "node " + links.get(i).address + " sent all-reduce " + p.getIndex() + " of step "
                        + p.getStepId() + " shaped " + p.getPartial().getShapeList() + ", expected " + index + " of " + stepId, true);
            }
            ProtoMapping.decode(p.getPartial(), i == 0 ? sum : part, 0);
            if (i > 0) {
                for (int k = 0; k < size; k++) {
                    sum[k] += part[k];
                }
            }
        }
        StepRequest reply = StepRequest.newBuilder().setReduced(ReduceResult.newBuilder().setStepId(stepId).setIndex(index)
                .setSum(ProtoMapping.encode(codec, sum, 0, rows, cols))).build();
        for (NodeLink link : links) {
            link.send(reply);
        }
        reductions++;
    }

    private static StepOutput output(NodeLink link, StepResponse r, long stepId) throws NodeFailure {
        if (!r.hasOutput()) {
            throw new NodeFailure(link, "node " + link.address + " sent " + r.getKindCase() + " in a pipeline step", true);
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

    private StepResult logits(NodeLink link, StepOutput o, StepPlan plan) throws NodeFailure {
        int want = plan.logitRowCount();
        Tensor t = o.getLogits();
        if (!o.hasLogits() || ProtoMapping.rows(t) != want || ProtoMapping.cols(t) != vocab) {
            throw new NodeFailure(link, "node " + link.address + " answered logits shaped " + t.getShapeList() + ", expected ["
                    + want + ", " + vocab + "]", true);
        }
        if (logits.length < want * vocab) {
            logits = new float[want * vocab];
        }
        ProtoMapping.decode(t, logits, 0);
        tokens += plan.totalTokens();
        return sampling.sample(plan, logits, want);
    }

    private void healthLoop() {
        while (!closed) {
            sleep(HEALTH_PERIOD_MS);
            lock.lock();
            try {
                if (!closed) {
                    checkHealth();
                }
            } catch (RuntimeException e) {
                LOG.warn("cluster health check failed", e);
            } finally {
                lock.unlock();
            }
        }
    }

    /** Reconnects nodes that are down; pings the others now and then and marks a node without its shard down. */
    private void checkHealth() {
        boolean ping = System.nanoTime() - lastPing > PING_EVERY_MS * 1_000_000L;
        if (ping) {
            lastPing = System.nanoTime();
        }
        for (NodeLink link : links) {
            if (link.isUp()) {
                if (!ping) {
                    continue;
                }
                try {
                    NodeStatus s = link.status(config.deadlines().call());
                    if (s.getState() != ShardState.SHARD_STATE_READY) {
                        link.markDown("lost its shard (" + s.getState() + ": " + s.getMessage() + ")");
                        LOG.warnf("node %s %s", link.address, link.downReason());
                    }
                } catch (NodeFailure e) {
                    link.markDown(e.getMessage());
                    LOG.warnf("node %s is down: %s", link.address, e.getMessage());
                }
            } else {
                try {
                    connect(link);
                    LOG.infof("node %s is back", link.address);
                } catch (NodeFailure e) {
                    link.markDown(e.getMessage());
                }
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean healthy() {
        for (NodeLink l : links) {
            if (!l.isUp()) {
                return false;
            }
        }
        return !closed;
    }

    /** Why the cluster cannot serve now, or "" when it can. */
    @Override
    public String healthMessage() {
        for (NodeLink l : links) {
            if (!l.isUp()) {
                return "node " + l.address + " is down: " + l.downReason();
            }
        }
        return "";
    }

    @Override
    public void observeLogits(LogitsObserver o) {
        sampling.observeLogits(o);
    }

    @Override
    public long prefillTokens() {
        return prefill;
    }

    @Override
    public long steps() {
        return steps;
    }

    public ClusterStats stats() {
        long sent = 0;
        long received = 0;
        long hops = 0;
        long hopNanos = 0;
        long compute = 0;
        for (NodeLink l : links) {
            sent += l.bytesSent;
            received += l.bytesReceived;
            hops += l.hops;
            hopNanos += l.hopNanos;
            compute += l.computeNanos;
        }
        return new ClusterStats(steps, tokens, sent, received, hops, hopNanos, compute, reductions);
    }

    @Override
    public long kvEpoch() {
        long e = 0;
        for (NodeLink l : links) {
            e += l.downs;
        }
        return e;
    }

    @Override
    public void close() {
        closed = true;
        health.interrupt();
        for (NodeLink l : links) {
            l.close();
        }
    }
}
