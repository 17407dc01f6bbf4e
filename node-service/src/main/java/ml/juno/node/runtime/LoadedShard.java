package ml.juno.node.runtime;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.lora.LoraAdapters;
import ml.juno.engine.lora.LoraPlan;
import java.nio.file.Path;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.kv.KvPaging;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Logits;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.shard.ShardAssignment;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.KvElement;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.ShardInfo;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.Tensor;

/**
 * One loaded shard: the mapped GGUF file, the model (a layer range or a tensor slice), and a paged session whose
 * KV pool has the block ids the coordinator hands out. {@link #step} runs one {@link StepBatch} (the step shape the
 * coordinator's {@code LocalExecutor} runs in process too) on the session. Used from the node's inference thread only.
 */
final class LoadedShard implements AutoCloseable {
    private static final int[] NO_BLOCKS = new int[0];

    private final GgufFile file;
    private final Model model;
    private final InferenceSession session;
    private final ShardAssignment assignment;
    private final ActivationCodec codec;
    private final ActivationCodec logitCodec;
    private final StepAllReduce allReduce;
    private final int dim;
    private final boolean embeds;
    private final boolean producesLogits;
    private ShardInfo info;
    private int loraModules;

    private LoadedShard(GgufFile file, Model model, InferenceSession session, ShardAssignment assignment,
                        ActivationCodec codec, StepAllReduce allReduce) {
        this.file = file;
        this.model = model;
        this.session = session;
        this.assignment = assignment;
        this.codec = codec;
        this.logitCodec = ProtoMapping.codec(ml.juno.model.wire.ActivationDtype.FLOAT32, codec.order());
        this.allReduce = allReduce;
        this.dim = model.config().dims().embedding();
        int layers = model.config().dims().layers();
        this.embeds = assignment.isTensorParallel() || assignment.layers().start() == 0;
        this.producesLogits = assignment.isTensorParallel() ? assignment.tensorRank() == 0 : assignment.layers().end() == layers;
    }

    /** Maps the model and checks every tensor of the shard; any problem is an exception with the reason. */
    static LoadedShard load(LoadShardRequest r, String nodeId) throws IOException {
        if (r.getModelPath().isBlank()) {
            throw new IllegalArgumentException("model_path is required");
        }
        if (r.getKvBlockSize() < 1 || r.getKvBlocks() < 1 || r.getMaxSequences() < 1 || r.getMaxBatchTokens() < 1) {
            throw new IllegalArgumentException("kv_block_size, kv_blocks, max_sequences and max_batch_tokens must be >= 1");
        }
        long t0 = System.nanoTime();
        GgufFile file = GgufFile.open(Path.of(r.getModelPath()));
        Model model = null;
        InferenceSession session = null;
        try {
            int threads = r.getThreads() > 0 ? r.getThreads() : Runtime.getRuntime().availableProcessors();
            KvType kv = r.getKvElement() == KvElement.KV_ELEMENT_F16 ? KvType.F16 : KvType.F32;
            EngineOptions options = new EngineOptions(threads, r.getContextLength(), kv, r.getMaxBatchTokens(), r.getMaxSequences());
            int layers = Architectures.forName(file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(file).dims().layers();
            ShardAssignment a = ProtoMapping.partition(r, layers);
            ShardSpec spec = new ShardSpec(a.layers().start(), a.layers().end(), a.tensorRank(), a.worldSize());
            StepAllReduce allReduce = new StepAllReduce();
            model = TensorParallel.load(file, options, spec, allReduce);
            if (r.getLoraPlayCount() > 0 || r.getLoraModulesCount() > 0) {
                List<LoraAdapters.Spec> play = new ArrayList<>();
                for (var l : r.getLoraPlayList()) {
                    play.add(new LoraAdapters.Spec(Path.of(l.getPath()), l.getScale()));
                }
                List<LoraAdapters.Module> modules = new ArrayList<>();
                for (var l : r.getLoraModulesList()) {
                    modules.add(new LoraAdapters.Module("m" + (modules.size() + 1), Path.of(l.getPath())));
                }
                try {
                    List<LoraPlan.Played> all = new ArrayList<>(LoraAdapters.play(play, file));
                    all.addAll(LoraAdapters.modules(modules, file));
                    LoraPlan.apply(model, all); // this shard's layers / tensor slice
                } catch (IOException e) {
                    throw new IllegalArgumentException(e.getMessage(), e);
                }
            }
            session = model.newPagedSession(new KvPaging(r.getKvBlockSize(), r.getKvBlocks()));
            ActivationCodec codec = ProtoMapping.codec(ProtoMapping.fromProto(r.getActivationDtype()), ProtoMapping.fromProto(r.getByteOrder()));
            LoadedShard s = new LoadedShard(file, model, session, a, codec, allReduce);
            s.loraModules = r.getLoraModulesCount();
            Runtime rt = Runtime.getRuntime();
            long used = rt.totalMemory() - rt.freeMemory();
            s.info = ShardInfo.newBuilder()
                    .setNodeId(nodeId)
                    .setFirstLayer(a.layers().start()).setEndLayer(a.layers().end()).setModelLayers(layers)
                    .setTensorRank(a.tensorRank()).setWorldSize(a.worldSize())
                    .setEmbeds(s.embeds).setProducesLogits(s.producesLogits)
                    .setEmbedding(s.dim).setVocab(model.config().dims().vocab())
                    .setWeightBytes(model.weightBytes()).setKvBytes(session.kvBytes())
                    .setMemoryUsedBytes(used).setMemoryFreeBytes(rt.maxMemory() - used)
                    .setBackend(model.backend().kind()).setIsa(model.backend().isa())
                    .setLoadMillis((System.nanoTime() - t0) / 1_000_000)
                    .build();
            return s;
        } catch (RuntimeException | Error e) {
            if (session != null) {
                session.close();
            }
            if (model != null) {
                model.close();
            }
            file.close();
            throw e;
        }
    }

    ShardInfo info() {
        return info;
    }

    /**
     * Runs one batch; a batch this shard cannot run or an engine failure becomes an output with {@code error}.
     *
     * @param activations the previous stage's {@code [rows, embedding]} hidden states, for a shard that does not embed
     */
    StepOutput step(StepBatch b, Tensor activations, Exchange exchange) {
        long t0 = System.nanoTime();
        StepOutput.Builder out = StepOutput.newBuilder().setStepId(b.stepId());
        try {
            allReduce.begin(b.stepId(), exchange);
            run(b, activations, out);
        } catch (RuntimeException e) {
            return StepOutput.newBuilder().setStepId(b.stepId()).setError(String.valueOf(e.getMessage() != null ? e.getMessage() : e)).build();
        } finally {
            allReduce.end();
        }
        return out.setComputeNanos(System.nanoTime() - t0 - allReduce.waitNanos()).build();
    }

    private void run(StepBatch b, Tensor activations, StepOutput.Builder out) {
        int n = b.rows().count(); // the session checks the rows against the shard
        for (int i = 0; i < n; i++) {
            if (b.rows().adapter(i) > loraModules) {
                throw new IllegalArgumentException("step " + b.stepId() + " row " + i + ": LoRA adapter " + b.rows().adapter(i)
                        + ", but this shard was loaded with " + loraModules + " named adapters");
            }
        }
        if (!embeds) {
            if (ProtoMapping.rows(activations) != n || ProtoMapping.cols(activations) != dim) {
                throw new IllegalArgumentException("step " + b.stepId() + ": activations of shape " + activations.getShapeList()
                        + ", expected [" + n + ", " + dim + "]");
            }
            ProtoMapping.decode(activations, session.hiddenStates(), 0);
        }
        Logits logits = session.forward(producesLogits ? b : b.withoutLogits()); // the batch as it came: the one step shape
        if (producesLogits) {
            if (logits == null) {
                throw new IllegalStateException("the shard produced no logits");
            }
            out.setLogits(ProtoMapping.encode(logitCodec, logits.data(), 0, logits.count(), logits.vocab()));
        } else if (!assignment.isTensorParallel()) {
            out.setActivations(ProtoMapping.encode(codec, session.hiddenStates(), 0, n, dim));
        }
    }

    /** Drops the block tables of {@code slots}; returns how many were valid slots. */
    int release(java.util.List<Integer> slots) {
        int released = 0;
        for (int s : slots) {
            if (s >= 0 && s < session.slots()) {
                session.setBlockTable(s, NO_BLOCKS, 0);
                released++;
            }
        }
        return released;
    }

    ActivationCodec codec() {
        return codec;
    }

    @Override
    public void close() {
        session.close();
        model.close();
        file.close();
    }
}
