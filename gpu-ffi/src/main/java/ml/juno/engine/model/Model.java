package ml.juno.engine.model;

import java.util.Objects;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kv.KvPaging;
import ml.juno.engine.model.block.AllReduce;
import ml.juno.engine.moe.ExpertBudget;
import ml.juno.engine.moe.ExpertStats;
import ml.juno.engine.moe.ExpertStore;

/**
 * A model (or shard) ready to run: config, checked and memory-mapped weights, and the backend that computes. The
 * {@link GgufFile} stays owned by the caller and must outlive the model. Sessions made by {@link #newSession()} hold
 * the KV memory and activation buffers.
 */
public final class Model implements AutoCloseable {
    private final ModelConfig config;
    private final EngineOptions options;
    private final DecoderModel decoder;
    private final Backend backend;
    private final int contextLength;
    /** The routed experts' store when {@link #streamExperts} installed one, else {@code null} (memory-mapped). */
    private ExpertStore experts;

    private Model(ModelConfig config, EngineOptions options, DecoderModel decoder, Backend backend) {
        this.config = config;
        this.options = options;
        this.decoder = decoder;
        this.backend = backend;
        this.contextLength = contextLength(config, options);
    }

    private static int contextLength(ModelConfig config, EngineOptions options) {
        return options.contextLength() > 0 ? options.contextLength()
                : Math.min(config.dims().contextLength(), EngineOptions.DEFAULT_MAX_CONTEXT);
    }

    /** The whole model, computed by the backend {@code backends} makes for {@code options.threads()} threads. */
    public static Model load(GgufFile file, EngineOptions options, Backend.Factory backends) {
        String arch = file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE);
        ModelConfig config = Architectures.forName(arch).config(file);
        return load(file, options, ShardSpec.whole(config.dims().layers()), backends);
    }

    /**
     * A shard of the model, computed by the backend {@code backends} makes (closed with the model). Every tensor of the
     * shard is checked here, before the backend is made and before any compute. When the process asks for an expert
     * cache ({@link ExpertBudget#requested}: {@code --expert-cache}, {@code JUNO_EXPERT_CACHE}), the routed experts of
     * an MoE model are streamed from the file through it ({@link #streamExperts}).
     */
    public static Model load(GgufFile file, EngineOptions options, ShardSpec shard, Backend.Factory backends) {
        return load(file, options, shard, backends, null);
    }

    /**
     * A shard of the model as {@link #load(GgufFile, EngineOptions, ShardSpec, Backend.Factory)}, tensor-parallel shards
     * combining their partial sums through {@code allReduce} ({@link AllReduce#sum} twice per layer, in the same order
     * on every rank; required when {@code shard.tensorParts() > 1}, ignored otherwise).
     */
    public static Model load(GgufFile file, EngineOptions options, ShardSpec shard, Backend.Factory backends,
                             AllReduce allReduce) {
        Objects.requireNonNull(backends, "backends");
        String arch = file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE);
        Architecture a = Architectures.forName(arch);
        ModelConfig config = a.config(file);
        DecoderModel decoder = a.load(file, config, shard, shard.tensorParts() > 1 ? allReduce : AllReduce.NONE,
                contextLength(config, options));
        ExpertBudget experts = ExpertBudget.requested();
        Model model = new Model(config, options, decoder, Objects.requireNonNull(backends.create(options.threads()), "backend"));
        model.backend.prepare(decoder.streamedMatrices());
        if (experts != null) {
            if (decoder.moeLayers().isEmpty()) {
                System.getLogger(Model.class.getName()).log(System.Logger.Level.INFO, "expert cache " + experts
                        + " ignored: " + file.path() + " has no mixture-of-experts layers here");
            } else {
                try {
                    model.streamExperts(file, experts);
                } catch (RuntimeException | Error e) {
                    model.close();
                    throw e;
                }
            }
        }
        return model;
    }

    public ModelConfig config() {
        return config;
    }

    public EngineOptions options() {
        return options;
    }

    public DecoderModel decoder() {
        return decoder;
    }

    public Backend backend() {
        return backend;
    }

    /** Positions per sequence the sessions' KV caches hold. */
    public int contextLength() {
        return contextLength;
    }

    /** Weight bytes one decode step reads (for GB/s figures). */
    public long weightBytes() {
        return decoder.weightBytes();
    }

    /** A session with a flat KV cache: {@code maxSequences} slots × the context. */
    public InferenceSession newSession() {
        return new InferenceSession(this);
    }

    /**
     * A session with a paged KV cache: a pool of {@code paging.numBlocks()} blocks shared by {@code maxSequences}
     * slots through block tables ({@link InferenceSession#setBlockTable}).
     */
    public InferenceSession newPagedSession(KvPaging paging) {
        return new InferenceSession(this, Objects.requireNonNull(paging, "paging"));
    }

    /**
     * Streams this model's routed experts from {@code file} (the one it was loaded from) through a RAM tier of
     * {@code budget} instead of the memory map ({@code --expert-cache}); call before any session runs. Logits are
     * bit-identical to the mapped run. Refused for a model without MoE layers or when a store is already installed.
     */
    public ExpertStore streamExperts(GgufFile file, ExpertBudget budget) {
        return streamExperts(file, budget, ExpertStore.Options.defaults());
    }

    /** {@link #streamExperts(GgufFile, ExpertBudget)} with explicit store options. */
    public ExpertStore streamExperts(GgufFile file, ExpertBudget budget, ExpertStore.Options options) {
        if (experts != null) {
            throw new IllegalStateException("experts already streamed");
        }
        experts = ExpertStore.attach(file, decoder.moeLayers(), decoder.moeLayerIndices(), backend, budget, options);
        return experts;
    }

    /** The expert store's telemetry, or {@code null} when the experts are memory-mapped. */
    public ExpertStats expertStats() {
        return experts == null ? null : experts.stats();
    }

    /** The store streaming the experts, or {@code null}. */
    public ExpertStore expertStore() {
        return experts;
    }

    @Override
    public void close() {
        if (experts != null) {
            experts.close();
        }
        backend.close();
    }
}
