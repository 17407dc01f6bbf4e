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
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.HiddenRows;
import ml.juno.engine.model.Logits;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.ShardSpec;
import ml.juno.engine.sampling.DrawResult;
import ml.juno.engine.sampling.RowDraw;
import ml.juno.engine.sampling.SamplingChain;
import ml.juno.engine.step.StepBatch;
import ml.juno.model.shard.ShardAssignment;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.shard.ShardSummary;
import ml.juno.model.wire.ActivationCodec;
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.Activations;
import ml.juno.model.wire.ShardOutput;

/**
 * One loaded shard: the mapped GGUF file, the model (a layer range or a tensor slice), and a paged session whose
 * KV pool has the block ids the coordinator hands out. {@link #step} runs one {@link StepBatch} on the session. Used
 * from the node's inference thread only.
 */
final class LoadedShard implements AutoCloseable {
    private static final System.Logger TRACE = System.getLogger(LoadedShard.class.getName());

    private static final int[] NO_BLOCKS = new int[0];

    private final GgufFile file;
    private final Model model;
    private final InferenceSession session;
    private final ShardAssignment assignment;
    private final ActivationCodec codec;
    private final ActivationCodec logitCodec;
    private final StepAllReduce allReduce;
    private final RankReduce ranks; // null: not tensor parallel
    private StageLink stage;        // null: not a pipeline stage that talks to its neighbours
    private SamplingChain chain;    // made on the first step that draws here
    private final int dim;
    private final boolean embeds;
    private final boolean producesLogits;
    private ShardSummary info;
    private int loraModules;

    private LoadedShard(GgufFile file, Model model, InferenceSession session, ShardAssignment assignment,
                        ActivationCodec codec, StepAllReduce allReduce, RankReduce ranks) {
        this.file = file;
        this.model = model;
        this.session = session;
        this.assignment = assignment;
        this.codec = codec;
        this.logitCodec = ActivationCodec.of(ActivationDtype.FLOAT32, codec.order());
        this.allReduce = allReduce;
        this.ranks = ranks;
        this.dim = model.config().dims().embedding();
        int layers = model.config().dims().layers();
        this.embeds = assignment.isTensorParallel() || assignment.layers().start() == 0;
        this.producesLogits = assignment.isTensorParallel() ? assignment.tensorRank() == 0 : assignment.layers().end() == layers;
    }

    /**
     * Maps the model and checks every tensor of the shard; any problem is an exception with the reason. A tensor slice
     * opens its links to its peers through {@code network}; their all-reduces wait at most {@code reduceTimeout}.
     */
    static LoadedShard load(ShardLoad r, String nodeId, RankReduce.Network network, java.time.Duration reduceTimeout) throws IOException {
        if (r.modelPath().isBlank()) {
            throw new IllegalArgumentException("model_path is required");
        }
        if (r.kvBlockSize() < 1 || r.kvBlocks() < 1 || r.maxSequences() < 1 || r.maxBatchTokens() < 1) {
            throw new IllegalArgumentException("kv_block_size, kv_blocks, max_sequences and max_batch_tokens must be >= 1");
        }
        long t0 = System.nanoTime();
        GgufFile file = GgufFile.open(Path.of(r.modelPath()));
        Model model = null;
        InferenceSession session = null;
        RankReduce ranks = null;
        try {
            int threads = r.threads() > 0 ? r.threads() : Runtime.getRuntime().availableProcessors();
            EngineOptions options = new EngineOptions(threads, r.contextLength(), r.kvType(), r.maxBatchTokens(), r.maxSequences());
            var dims = Architectures.forName(file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(file).dims();
            int layers = dims.layers();
            ShardAssignment a = r.partition().assignment(layers);
            ShardSpec spec = new ShardSpec(a.layers().start(), a.layers().end(), a.tensorRank(), a.worldSize());
            StepAllReduce allReduce = new StepAllReduce();
            ActivationCodec codec = ActivationCodec.of(r.dtype(), r.order());
            long maxRowsBytes = (long) r.maxBatchTokens() * dims.embedding() * Float.BYTES + 8L * r.maxBatchTokens(); // a step's rows, any wire type
            if (r.partition() instanceof ShardLoad.Tensor t && t.worldSize() > 1) {
                // refuses a slice without its peers' addresses; peers on this host exchange partials in shared memory
                long shmPayload = SharedMailbox.enabled() ? maxRowsBytes : 0;
                ranks = new RankReduce(t, codec, reduceTimeout, shmPayload);
            }
            model = TensorParallel.load(file, options, spec, allReduce);
            if (!r.loraPlay().isEmpty() || !r.loraModules().isEmpty()) {
                List<LoraAdapters.Spec> play = new ArrayList<>();
                for (ShardLoad.Lora l : r.loraPlay()) {
                    play.add(new LoraAdapters.Spec(Path.of(l.path()), l.scale()));
                }
                List<LoraAdapters.Module> modules = new ArrayList<>();
                for (String path : r.loraModules()) {
                    modules.add(new LoraAdapters.Module("m" + (modules.size() + 1), Path.of(path)));
                }
                try {
                    List<LoraPlan.Played> all = new ArrayList<>(LoraAdapters.play(play, file));
                    all.addAll(LoraAdapters.modules(modules, file));
                    LoraPlan.apply(model, all); // this shard's layers / tensor slice
                } catch (IOException e) {
                    throw new IllegalArgumentException(e.getMessage(), e);
                }
            }
            session = model.newPagedSession(new KvPaging(r.kvBlockSize(), r.kvBlocks()));
            if (ranks != null) {
                allReduce.connect(ranks.connect(network));
            }
            LoadedShard s = new LoadedShard(file, model, session, a, codec, allReduce, ranks);
            if (r.partition() instanceof ShardLoad.Pipeline p && p.nodeToNode()) {
                s.stage = new StageLink(p, reduceTimeout, StageRing.wanted() ? maxRowsBytes : 0).connect(network); // rows in shared memory on this host unless turned off
            }
            s.loraModules = r.loraModules().size();
            Runtime rt = Runtime.getRuntime();
            long used = rt.totalMemory() - rt.freeMemory();
            s.info = new ShardSummary(nodeId, a, layers, s.embeds, s.producesLogits, s.dim, model.config().dims().vocab(),
                    model.weightBytes(), session.kvBytes(), used, rt.maxMemory() - used, model.backend().kind(),
                    model.backend().isa(), (System.nanoTime() - t0) / 1_000_000);
            return s;
        } catch (RuntimeException | Error e) {
            if (ranks != null) {
                ranks.close();
            }
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

    ShardSummary info() {
        return info;
    }

    /**
     * Runs one batch; a batch this shard cannot run or an engine failure becomes an output with {@code error}.
     *
     * @param activations the previous stage's {@code [rows, embedding]} hidden states, for a shard that does not embed
     *                    (null otherwise)
     */
    ShardOutput step(StepBatch b, Activations activations, java.util.function.BooleanSupplier cancelled) {
        return step(b, activations, false, 0, List.of(), cancelled);
    }

    /**
     * Runs one batch.
     *
     * @param fromPeer true: the input rows come from the previous stage's stream ({@link StageLink}), not the coordinator
     * @param microBatch the batch's number within its step (a pipeline step split into micro-batches); its rows travel
     *                   between the stages under it
     * @param draws    one per logit row: the rows to draw here ({@code null} entries: answer their logits); empty: answer
     *                 every logit row's logits
     */
    ShardOutput step(StepBatch b, Activations activations, boolean fromPeer, int microBatch, List<RowDraw> draws,
                     java.util.function.BooleanSupplier cancelled) {
        long t0 = System.nanoTime();
        try {
            allReduce.begin(b.stepId(), cancelled);
            long waited = 0;
            if (fromPeer) {
                if (stage == null || stage.first()) {
                    throw new IllegalArgumentException("step " + b.stepId() + " asks for the previous stage's rows, but this node "
                            + (stage == null ? "has no pipeline neighbours" : "is the first stage"));
                }
                activations = stage.take(b.stepId(), microBatch, t0, cancelled);
                waited = System.nanoTime() - t0;
            }
            return run(b, activations, microBatch, draws, t0 + waited, waited);
        } catch (RuntimeException e) {
            return ShardOutput.failed(b.stepId(), String.valueOf(e.getMessage() != null ? e.getMessage() : e));
        }
    }

    /** The peers' partials come in here (null: not tensor parallel). */
    RankReduce ranks() {
        return ranks;
    }

    private ShardOutput run(StepBatch b, Activations activations, int microBatch, List<RowDraw> draws, long t0, long waited) {
        int n = b.rows().count(); // the session checks the rows against the shard
        for (int i = 0; i < n; i++) {
            if (b.rows().adapter(i) > loraModules) {
                throw new IllegalArgumentException("step " + b.stepId() + " row " + i + ": LoRA adapter " + b.rows().adapter(i)
                        + ", but this shard was loaded with " + loraModules + " named adapters");
            }
        }
        if (!embeds) {
            if (activations == null || !activations.hasShape(n, dim)) {
                throw new IllegalArgumentException("step " + b.stepId() + ": activations of shape "
                        + (activations == null ? "[]" : "[" + activations.rows() + ", " + activations.cols() + "]")
                        + ", expected [" + n + ", " + dim + "]");
            }
            activations.decode(session.hiddenStates(), 0);
        }
        // every tensor-parallel rank computes its vocabulary rows of the head (the ranks gather them); rank 0 answers
        Logits logits = session.forward(producesLogits || assignment.isTensorParallel() ? b : b.withoutLogits());
        Activations logitRows = null;
        Activations finalHidden = null;
        List<DrawResult> sampled = List.of();
        Activations rows = null; // a stage's output rows, for the next stage (or, through the coordinator, in hidden)
        if (producesLogits) {
            if (logits == null) {
                throw new IllegalStateException("the shard produced no logits");
            }
            if (draws.isEmpty()) {
                logitRows = Activations.encode(logitCodec, logits.data(), 0, logits.count(), logits.vocab());
            } else {
                sampled = new ArrayList<>(draws.size());
                logitRows = draw(b.stepId(), logits, draws, sampled);
            }
            HiddenRows h = session.finalHidden();
            if (h.count() > 0) {
                finalHidden = Activations.encode(logitCodec, h.data(), 0, h.count(), h.dim());
            }
        } else if (!assignment.isTensorParallel()) {
            rows = Activations.encode(codec, session.hiddenStates(), 0, n, dim);
        }
        // this shard's work on the step ends here, before a stage's rows leave: the next stage runs from then on (on a
        // shared core it may take this thread's core before it answers), and a stage's compute overlapping the next
        // one's would count the same wall time twice (the pipeline's time not computing came out negative)
        long compute = System.nanoTime() - t0 - allReduce.waitNanos();
        model.backend().rest(); // the next step comes a hop or a round trip later: the compute threads sleep now
        // to the next stage itself (the coordinator gets a short answer), or without stage links to the coordinator
        long forwarded = rows != null && stage != null ? stage.send(b.stepId(), microBatch, rows) : 0;
        Activations hidden = stage == null ? rows : null;
        if (TRACE.isLoggable(System.Logger.Level.TRACE)) { // --verbose: one line per step on the node
            TRACE.log(System.Logger.Level.TRACE, String.format(java.util.Locale.ROOT, "step %d: %d rows through layers [%d, %d)%s in %.2f ms%s",
                    b.stepId(), n, assignment.layers().start(), assignment.layers().end(),
                    assignment.isTensorParallel() ? " slice " + assignment.tensorRank() + "/" + assignment.worldSize() : "", compute / 1e6,
                    allReduce.waitNanos() > 0 ? String.format(java.util.Locale.ROOT, " (+%.2f ms waiting for all-reduces)", allReduce.waitNanos() / 1e6) : ""));
        }
        return new ShardOutput(b.stepId(), hidden, logitRows, null, compute, allReduce.count(), allReduce.waitNanos(),
                allReduce.bytesSent() + forwarded, finalHidden, sampled, waited);
    }

    /**
     * Draws the logit rows {@code draws} asks for here (into {@code sampled}, in order) with the same chain as the
     * coordinator's sampler; the other rows' logits, in order, or null when every row was drawn.
     */
    private Activations draw(long stepId, Logits logits, List<RowDraw> draws, List<DrawResult> sampled) {
        if (draws.size() != logits.count()) {
            throw new IllegalArgumentException("step " + stepId + ": " + draws.size() + " samplers for " + logits.count() + " logit rows");
        }
        int vocab = logits.vocab();
        if (chain == null || chain.vocabSize() != vocab) {
            chain = new SamplingChain(vocab);
        }
        int left = 0;
        for (RowDraw d : draws) {
            left += d == null ? 1 : 0;
        }
        float[] rest = left == 0 ? null : new float[left * vocab];
        int k = 0;
        for (int i = 0; i < draws.size(); i++) {
            RowDraw d = draws.get(i);
            if (d == null) {
                System.arraycopy(logits.data(), i * vocab, rest, k++ * vocab, vocab);
            } else {
                sampled.add(chain.draw(logits.data(), i * vocab, d));
            }
        }
        return rest == null ? null : Activations.encode(logitCodec, rest, 0, left, vocab);
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

    /** The links to the neighbouring stages (null: not a pipeline stage that has them). */
    StageLink stage() {
        return stage;
    }

    @Override
    public void close() {
        if (ranks != null) {
            ranks.close();
        }
        if (stage != null) {
            stage.close();
        }
        session.close();
        model.close();
        file.close();
    }
}
