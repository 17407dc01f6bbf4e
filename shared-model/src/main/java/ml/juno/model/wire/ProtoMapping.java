package ml.juno.model.wire;

import com.google.protobuf.UnsafeByteOperations;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.step.SlotBlocks;
import ml.juno.engine.step.StepBatch;
import ml.juno.engine.step.StepRows;
import ml.juno.model.shard.ShardAssignment;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.shard.ShardPhase;
import ml.juno.model.shard.ShardSummary;
import ml.juno.node.v1.BlockTable;
import ml.juno.node.v1.KvElement;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.engine.sampling.DrawParams;
import ml.juno.engine.sampling.DrawResult;
import ml.juno.engine.sampling.RowDraw;
import ml.juno.node.v1.PipelineShard;
import ml.juno.node.v1.RowSampler;
import ml.juno.node.v1.SampledRow;
import ml.juno.node.v1.ShardInfo;
import ml.juno.node.v1.ShardState;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.Tensor;
import ml.juno.node.v1.TensorDtype;
import ml.juno.node.v1.TensorShard;

/**
 * The one place that converts between the generated proto classes and plain Java: step batches, activations (tensors),
 * a shard's step output, load requests, shard summaries and states, dtypes, byte orders and shard assignments. Tensors leave without a copy of their bytes.
 */
public final class ProtoMapping {

    private ProtoMapping() {}

    /** {@code src[offset .. offset + rows*cols)} as a {@code [rows, cols]} tensor in the codec's dtype and order. */
    public static Tensor encode(ActivationCodec codec, float[] src, int offset, int rows, int cols) {
        return toProto(Activations.encode(codec, src, offset, rows, cols));
    }

    /** Rows of a {@code [rows, cols]} tensor; a tensor of another rank is refused. */
    public static int rows(Tensor t) {
        checkRank(t);
        return t.getShape(0);
    }

    public static int cols(Tensor t) {
        checkRank(t);
        return t.getShape(1);
    }

    /** Decodes {@code t} into {@code dst[offset ..]}; the shape, dtype and byte count are checked. */
    public static void decode(Tensor t, float[] dst, int offset) {
        fromProto(t).decode(dst, offset);
    }

    /** {@code a} on the wire; its array is wrapped, not copied (it is never written again). */
    public static Tensor toProto(Activations a) {
        return Tensor.newBuilder()
                .setDtype(toProto(a.dtype()))
                .setByteOrder(toProto(a.order()))
                .addShape(a.rows()).addShape(a.cols())
                .setData(UnsafeByteOperations.unsafeWrap(a.data()))
                .build();
    }

    /** The activations {@code t} holds: a {@code [rows, cols]} tensor whose bytes agree with its shape and dtype. */
    public static Activations fromProto(Tensor t) {
        checkRank(t);
        return new Activations(fromProto(t.getDtype()), fromProto(t.getByteOrder()), t.getShape(0), t.getShape(1),
                t.getData().toByteArray());
    }

    private static void checkRank(Tensor t) {
        if (t.getShapeCount() != 2) {
            throw new IllegalArgumentException("expected a [rows, cols] tensor, got shape " + t.getShapeList());
        }
    }

    /** A shard's answer to one step, on the wire. */
    public static StepOutput toProto(ShardOutput o) {
        StepOutput.Builder b = StepOutput.newBuilder().setStepId(o.stepId()).setComputeNanos(o.computeNanos())
                .setReductions(o.reductions()).setReduceNanos(o.reduceNanos()).setPeerBytesSent(o.peerBytesSent());
        if (o.error() != null) {
            b.setError(o.error());
        }
        if (o.activations() != null) {
            b.setActivations(toProto(o.activations()));
        }
        if (o.logits() != null) {
            b.setLogits(toProto(o.logits()));
        }
        if (o.hidden() != null) {
            b.setHidden(toProto(o.hidden()));
        }
        for (DrawResult d : o.sampled()) {
            b.addSampled(toProto(d));
        }
        return b.setInputWaitNanos(o.inputWaitNanos()).build();
    }

    /** A row drawn on a node, on the wire. */
    public static SampledRow toProto(DrawResult d) {
        SampledRow.Builder b = SampledRow.newBuilder().setToken(d.token()).setError(d.error());
        if (d.hasLogprobs()) {
            b.setHasLogprobs(true).setLogprob(d.logprob());
            for (int i = 0; i < d.topIds().length; i++) {
                b.addTopIds(d.topIds()[i]).addTopLogprobs(d.topLogprobs()[i]);
            }
        }
        return b.build();
    }

    /** A row a node drew; one whose alternatives do not pair up is refused. */
    public static DrawResult fromProto(SampledRow r) {
        if (r.getTopIdsCount() != r.getTopLogprobsCount()) {
            throw new IllegalArgumentException("a sampled row with " + r.getTopIdsCount() + " alternatives and "
                    + r.getTopLogprobsCount() + " log-probabilities");
        }
        if (!r.getHasLogprobs()) {
            return r.getToken() < 0 ? DrawResult.failed(r.getError().isEmpty() ? "the node's draw failed" : r.getError())
                    : DrawResult.of(r.getToken());
        }
        int[] ids = new int[r.getTopIdsCount()];
        float[] lps = new float[ids.length];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = r.getTopIds(i);
            lps[i] = r.getTopLogprobs(i);
        }
        return new DrawResult(r.getToken(), r.getError(), r.getLogprob(), ids, lps);
    }

    /** One logit row's draw for the node with the logits; {@code null}: the coordinator draws it (the node answers logits). */
    public static RowSampler toProto(RowDraw d) {
        if (d == null) {
            return RowSampler.getDefaultInstance();
        }
        DrawParams p = d.params();
        RowSampler.Builder b = RowSampler.newBuilder().setDraw(true).setTemperature(p.temperature()).setTopK(p.topK())
                .setTopP(p.topP()).setMinP(p.minP()).setRepeat(p.repeat()).setFrequency(p.frequency()).setPresence(p.presence())
                .setTopLogprobs(d.topLogprobs());
        int[] ids = p.biasIds();
        float[] values = p.biasValues();
        for (int i = 0; i < ids.length; i++) {
            b.addBiasIds(ids[i]).addBiasValues(values[i]);
        }
        for (int i = 0; i < d.windowSize(); i++) {
            b.addWindow(d.window()[i]);
        }
        for (int t : d.suppressed()) {
            b.addSuppressed(t);
        }
        for (long w : d.rng()) {
            b.addRng(w);
        }
        return b.build();
    }

    /**
     * The draws a batch asks of the node with the logits, one per logit row (null: answer that row's logits); empty
     * when it asks none.
     *
     * @throws IllegalArgumentException an entry out of range, or a count that is not the batch's logit rows
     */
    public static List<RowDraw> samplers(ml.juno.node.v1.StepBatch p, int logitRows) {
        if (p.getSamplersCount() == 0) {
            return List.of();
        }
        if (p.getSamplersCount() != logitRows) {
            throw new IllegalArgumentException("step " + p.getStepId() + ": " + p.getSamplersCount() + " samplers for " + logitRows + " logit rows");
        }
        List<RowDraw> out = new ArrayList<>(logitRows);
        for (RowSampler r : p.getSamplersList()) {
            if (!r.getDraw()) {
                out.add(null);
                continue;
            }
            try {
                int[] bias = r.getBiasIdsList().stream().mapToInt(Integer::intValue).toArray();
                float[] values = new float[r.getBiasValuesCount()];
                for (int i = 0; i < values.length; i++) {
                    values[i] = r.getBiasValues(i);
                }
                int[] window = r.getWindowList().stream().mapToInt(Integer::intValue).toArray();
                int[] suppressed = r.getSuppressedList().stream().mapToInt(Integer::intValue).toArray();
                long[] rng = r.getRngList().stream().mapToLong(Long::longValue).toArray();
                out.add(new RowDraw(new DrawParams(r.getTemperature(), r.getTopK(), r.getTopP(), r.getMinP(), r.getRepeat(),
                        r.getFrequency(), r.getPresence(), bias, values), window, window.length, suppressed, rng, r.getTopLogprobs()));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("step " + p.getStepId() + ", sampler " + out.size() + ": " + e.getMessage(), e);
            }
        }
        return out;
    }

    public static TensorDtype toProto(ActivationDtype d) {
        return switch (d) {
            case FLOAT32 -> TensorDtype.TENSOR_DTYPE_FLOAT32;
            case FLOAT16 -> TensorDtype.TENSOR_DTYPE_FLOAT16;
            case INT8 -> TensorDtype.TENSOR_DTYPE_INT8;
        };
    }

    public static ActivationDtype fromProto(TensorDtype d) {
        return switch (d) {
            case TENSOR_DTYPE_FLOAT32 -> ActivationDtype.FLOAT32;
            case TENSOR_DTYPE_FLOAT16 -> ActivationDtype.FLOAT16;
            case TENSOR_DTYPE_INT8 -> ActivationDtype.INT8;
            default -> throw new IllegalArgumentException("tensor dtype " + d + " is not one of FLOAT32, FLOAT16, INT8");
        };
    }

    public static ml.juno.node.v1.ByteOrder toProto(java.nio.ByteOrder o) {
        return o == java.nio.ByteOrder.BIG_ENDIAN ? ml.juno.node.v1.ByteOrder.BYTE_ORDER_BIG_ENDIAN
                : ml.juno.node.v1.ByteOrder.BYTE_ORDER_LITTLE_ENDIAN;
    }

    public static java.nio.ByteOrder fromProto(ml.juno.node.v1.ByteOrder o) {
        return switch (o) {
            case BYTE_ORDER_LITTLE_ENDIAN -> java.nio.ByteOrder.LITTLE_ENDIAN;
            case BYTE_ORDER_BIG_ENDIAN -> java.nio.ByteOrder.BIG_ENDIAN;
            default -> throw new IllegalArgumentException("byte order " + o + " is not LITTLE_ENDIAN or BIG_ENDIAN");
        };
    }

    /** Parses a CLI value: BIG_ENDIAN / LITTLE_ENDIAN (case-insensitive). */
    public static java.nio.ByteOrder parseByteOrder(String s) {
        if ("BIG_ENDIAN".equalsIgnoreCase(s)) {
            return java.nio.ByteOrder.BIG_ENDIAN;
        }
        if ("LITTLE_ENDIAN".equalsIgnoreCase(s)) {
            return java.nio.ByteOrder.LITTLE_ENDIAN;
        }
        throw new IllegalArgumentException("unknown byte order '" + s + "' (expected BIG_ENDIAN or LITTLE_ENDIAN)");
    }

    /** {@code b} on the wire, token ids included when it has them. */
    public static ml.juno.node.v1.StepBatch toProto(StepBatch b) {
        return builder(b).build();
    }

    /** {@code b} for a stage that takes its input rows from the previous stage's stream: no token ids, no activations. */
    public static ml.juno.node.v1.StepBatch toProtoFromPeer(StepBatch b) {
        return builder(b.withoutTokens()).setActivationsFromPeer(true).build();
    }

    /** {@code b} as micro-batch {@code m} of its step. */
    public static ml.juno.node.v1.StepBatch microBatch(ml.juno.node.v1.StepBatch b, int m) {
        return m == 0 ? b : b.toBuilder().setMicroBatch(m).build();
    }

    /** {@code b} with one draw per logit row for the node with the logits ({@code null} entries: answer logits). */
    public static ml.juno.node.v1.StepBatch withSamplers(ml.juno.node.v1.StepBatch b, List<RowDraw> draws) {
        ml.juno.node.v1.StepBatch.Builder p = b.toBuilder();
        for (RowDraw d : draws) {
            p.addSamplers(toProto(d));
        }
        return p.build();
    }

    /** {@code b} for a stage that does not embed: no token ids, {@code activations} ({@code [rows, embedding]}) instead. */
    public static ml.juno.node.v1.StepBatch toProto(StepBatch b, Tensor activations) {
        return builder(b.withoutTokens()).setActivations(activations).build();
    }

    private static ml.juno.node.v1.StepBatch.Builder builder(StepBatch b) {
        StepRows r = b.rows();
        ml.juno.node.v1.StepBatch.Builder p = ml.juno.node.v1.StepBatch.newBuilder().setStepId(b.stepId());
        for (int i = 0; i < r.count(); i++) {
            p.addSlots(r.slots()[i]).addPositions(r.positions()[i]).addNeedsLogits(r.needsLogits()[i]);
        }
        for (int t : r.tokenIds()) {
            p.addTokenIds(t);
        }
        if (r.hasAdapters()) {
            for (int i = 0; i < r.count(); i++) {
                p.addAdapters(r.adapter(i));
            }
        }
        if (r.hiddenRows() > 0) {
            for (int i = 0; i < r.count(); i++) {
                p.addNeedsHidden(r.needsHidden(i));
            }
        }
        for (SlotBlocks t : b.blockTables()) {
            BlockTable.Builder bt = BlockTable.newBuilder().setSlot(t.slot());
            for (int blk : t.blocks()) {
                bt.addBlocks(blk);
            }
            p.addBlockTables(bt);
        }
        return p;
    }

    /**
     * The batch {@code p} describes (its activations, if any, stay in {@code p}).
     *
     * @throws IllegalArgumentException when the columns disagree (the message names the step)
     */
    public static StepBatch fromProto(ml.juno.node.v1.StepBatch p) {
        int n = p.getSlotsCount();
        int[] slots = new int[n];
        int[] positions = new int[p.getPositionsCount()];
        int[] tokens = new int[p.getTokenIdsCount()];
        boolean[] logits = new boolean[p.getNeedsLogitsCount()];
        for (int i = 0; i < n; i++) {
            slots[i] = p.getSlots(i);
        }
        for (int i = 0; i < positions.length; i++) {
            positions[i] = p.getPositions(i);
        }
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = p.getTokenIds(i);
        }
        for (int i = 0; i < logits.length; i++) {
            logits[i] = p.getNeedsLogits(i);
        }
        List<SlotBlocks> tables = new ArrayList<>(p.getBlockTablesCount());
        try {
            for (BlockTable t : p.getBlockTablesList()) {
                int[] blocks = new int[t.getBlocksCount()];
                for (int i = 0; i < blocks.length; i++) {
                    blocks[i] = t.getBlocks(i);
                }
                tables.add(new SlotBlocks(t.getSlot(), blocks));
            }
            int[] adapters = new int[p.getAdaptersCount()];
            for (int i = 0; i < adapters.length; i++) {
                adapters[i] = p.getAdapters(i);
                if (adapters[i] < 0) {
                    throw new IllegalArgumentException("row " + i + ": negative adapter id " + adapters[i]);
                }
            }
            boolean[] hidden = new boolean[p.getNeedsHiddenCount()];
            for (int i = 0; i < hidden.length; i++) {
                hidden[i] = p.getNeedsHidden(i);
            }
            return new StepBatch(p.getStepId(), new StepRows(slots, positions, tokens, logits, adapters, hidden), tables);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("step " + p.getStepId() + ": " + e.getMessage(), e);
        }
    }

    /** Sets the partition of a load request from {@code a}. */
    public static LoadShardRequest.Builder partition(LoadShardRequest.Builder b, ShardAssignment a) {
        if (a.isTensorParallel()) {
            return b.setTensor(TensorShard.newBuilder().setRank(a.tensorRank()).setWorldSize(a.worldSize()));
        }
        return b.setPipeline(PipelineShard.newBuilder().setFirstLayer(a.layers().start()).setEndLayer(a.layers().end()));
    }

    /** {@code b} for stage {@code stage} of the pipeline at {@code stages} (host:port each): the stages send each other their rows. */
    public static LoadShardRequest.Builder stages(LoadShardRequest.Builder b, List<String> stages, int stage, long group, long forwardTimeoutMillis) {
        b.getPipelineBuilder().addAllStages(stages).setStage(stage).setGroup(group).setForwardTimeoutMillis(forwardTimeoutMillis);
        return b;
    }

    /** The assignment a load request describes; {@code modelLayers} fills in a tensor shard's layer range. */
    public static ShardAssignment partition(LoadShardRequest r, int modelLayers) {
        return partition(r).assignment(modelLayers);
    }

    private static ShardLoad.Partition partition(LoadShardRequest r) {
        return switch (r.getPartitionCase()) {
            case PIPELINE -> new ShardLoad.Pipeline(r.getPipeline().getFirstLayer(), r.getPipeline().getEndLayer(),
                    r.getPipeline().getStagesList(), r.getPipeline().getStage(), r.getPipeline().getGroup(),
                    r.getPipeline().getForwardTimeoutMillis());
            case TENSOR -> new ShardLoad.Tensor(r.getTensor().getRank(), r.getTensor().getWorldSize(), r.getTensor().getPeersList(),
                    r.getTensor().getGroup(), r.getTensor().getReduceTimeoutMillis());
            case PARTITION_NOT_SET -> new ShardLoad.Whole();
        };
    }

    /**
     * What {@code r} asks a node to load.
     *
     * @throws IllegalArgumentException when its activation dtype or byte order is not one Juno knows
     */
    public static ShardLoad fromProto(LoadShardRequest r) {
        return new ShardLoad(r.getModelPath(), partition(r), fromProto(r.getActivationDtype()), fromProto(r.getByteOrder()),
                r.getContextLength(), r.getMaxSequences(), r.getMaxBatchTokens(), r.getKvBlockSize(), r.getKvBlocks(),
                r.getKvElement() == KvElement.KV_ELEMENT_F16 ? KvType.F16 : KvType.F32, r.getThreads(),
                r.getLoraPlayList().stream().map(l -> new ShardLoad.Lora(l.getPath(), l.getScale())).toList(),
                r.getLoraModulesList().stream().map(l -> l.getPath()).toList());
    }

    /** What a node says it loaded, on the wire. */
    public static ShardInfo toProto(ShardSummary s) {
        ShardAssignment a = s.assignment();
        return ShardInfo.newBuilder()
                .setNodeId(s.nodeId())
                .setFirstLayer(a.layers().start()).setEndLayer(a.layers().end()).setModelLayers(s.modelLayers())
                .setTensorRank(a.tensorRank()).setWorldSize(a.worldSize())
                .setEmbeds(s.embeds()).setProducesLogits(s.producesLogits())
                .setEmbedding(s.embedding()).setVocab(s.vocab())
                .setWeightBytes(s.weightBytes()).setKvBytes(s.kvBytes())
                .setMemoryUsedBytes(s.memoryUsedBytes()).setMemoryFreeBytes(s.memoryFreeBytes())
                .setBackend(s.backend()).setIsa(s.isa())
                .setLoadMillis(s.loadMillis())
                .build();
    }

    public static ShardState toProto(ShardPhase p) {
        return switch (p) {
            case EMPTY -> ShardState.SHARD_STATE_EMPTY;
            case LOADING -> ShardState.SHARD_STATE_LOADING;
            case READY -> ShardState.SHARD_STATE_READY;
            case FAILED -> ShardState.SHARD_STATE_FAILED;
        };
    }
}
