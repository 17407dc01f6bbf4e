package ml.juno.coordinator.engine;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.kvcache.KvCacheManager;
import ml.juno.coordinator.kvcache.KvCacheStats;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.Scheduler;
import ml.juno.coordinator.scheduler.SchedulerConfig;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.tokenizer.ChatTemplate;
import ml.juno.coordinator.tokenizer.ChatTemplates;
import ml.juno.coordinator.tokenizer.StreamingDetokenizer;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kv.KvPaging;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.ModelConfig;
import ml.juno.engine.model.ModelKeys;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;

/**
 * Model, tokenizer, chat template, scheduler, KV bookkeeping and the generation loop of one process: the in-process
 * engine behind {@code juno local}, {@code juno generate} and the HTTP API.
 *
 * <p>The KV memory is one paged pool ({@value #KV_BLOCK_SIZE}-token blocks) shared by all sequences; the scheduler's
 * {@link KvCacheManager} hands out the block ids and keeps finished prompts' full blocks as a prefix cache, so a
 * request that starts like an earlier one computes only what is new. One platform thread runs schedule → execute →
 * update; {@link #submit}, {@link #cancel} and {@link #stats} are safe from any thread.
 */
public final class InferenceEngine implements AutoCloseable {
    /** Tokens per KV block (vLLM's default). */
    public static final int KV_BLOCK_SIZE = 16;

    private final EngineConfig config;
    private final GgufFile file;
    private final Runnable closeCompute; // the in-process model and session, or nothing (a cluster)
    private final Tokenizer tokenizer;
    private final ChatTemplate chatTemplate;
    private final ManagedExecutor executor;
    private final GenerationLoop loop;
    private final ModelInfo info;
    private final int kvBlocks;
    private final Object lifecycle = new Object();
    private volatile boolean closed;

    private InferenceEngine(EngineConfig config, GgufFile file, ManagedExecutor executor, Runnable closeCompute,
                            Tokenizer tokenizer, ChatTemplate chatTemplate, KvCacheConfig kvConfig, int context, int vocab) {
        this.config = config;
        this.file = file;
        this.closeCompute = closeCompute;
        this.tokenizer = tokenizer;
        this.chatTemplate = chatTemplate;
        this.kvBlocks = kvConfig.numBlocks();
        KvCacheManager kv = new KvCacheManager(kvConfig);
        Scheduler scheduler = new Scheduler(new SchedulerConfig(config.maxBatchTokens(), config.maxSequences(),
                config.maxQueue(), context, Duration.ofSeconds(1)), kv, vocab);
        this.executor = executor;
        this.loop = new GenerationLoop(scheduler, executor);
        long params = 0;
        long bytes = 0;
        for (GgufTensorInfo t : file.tensors()) {
            params += t.elementCount();
            bytes += t.byteSize();
        }
        this.info = new ModelInfo(file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE), context, vocab, params, bytes,
                config.modelPath());
    }

    /**
     * Loads the model, sizes the KV pool and starts the inference thread.
     *
     * @throws IOException when the file cannot be read or is not a model this engine runs (the message says why)
     */
    public static InferenceEngine open(EngineConfig config) throws IOException {
        GgufFile file = GgufFile.open(config.modelPath());
        Model model = null;
        InferenceSession session = null;
        try {
            Tokenizer tokenizer = Tokenizer.fromGguf(file);
            ChatTemplate template = ChatTemplates.forModel(file.metadata(), tokenizer);
            int threads = config.threads() > 0 ? config.threads() : Runtime.getRuntime().availableProcessors();
            model = Model.load(file, new EngineOptions(threads, config.contextLength(), config.kvType(),
                    config.maxBatchTokens(), config.maxSequences()));
            int context = model.contextLength();
            long bytesPerBlock = 2L * model.decoder().shard().layerCount() * model.decoder().kvDim()
                    * config.kvType().bytes * KV_BLOCK_SIZE;
            int blocks = kvBlocks(config, context, bytesPerBlock);
            session = model.newPagedSession(new KvPaging(KV_BLOCK_SIZE, blocks));
            InferenceSession s = session;
            Model m = model;
            InferenceEngine engine = new InferenceEngine(config, file, new LocalExecutor(session, KV_BLOCK_SIZE), () -> {
                s.close();
                m.close();
            }, tokenizer, template, new KvCacheConfig(KV_BLOCK_SIZE, blocks), context, model.config().dims().vocab());
            engine.loop.start();
            return engine;
        } catch (IllegalArgumentException | IllegalStateException | OutOfMemoryError e) {
            closeQuietly(session, model, file);
            throw new IOException("cannot run " + config.modelPath() + ": " + e.getMessage(), e);
        } catch (RuntimeException | Error e) {
            closeQuietly(session, model, file);
            throw e;
        }
    }

    /**
     * Tokenizer, scheduler and KV bookkeeping here, compute in the executor {@code factory} builds (a cluster of
     * nodes). The KV pool is sized as for the in-process engine ({@code kvBudgetBytes} counts the whole model's
     * layers). Prefix caching is on: when a node goes down its KV memory may be lost, so the loop forgets every cached
     * prefix before the next step ({@link ManagedExecutor#kvEpoch}).
     */
    public static InferenceEngine open(EngineConfig config, ExecutorFactory factory) throws IOException {
        GgufFile file = GgufFile.open(config.modelPath());
        ManagedExecutor executor = null;
        try {
            Tokenizer tokenizer = Tokenizer.fromGguf(file);
            ChatTemplate template = ChatTemplates.forModel(file.metadata(), tokenizer);
            ModelConfig mc = Architectures.forName(file.metadata().getString(ModelKeys.ARCHITECTURE)).config(file);
            int context = config.contextLength() > 0 ? config.contextLength()
                    : Math.min(mc.dims().contextLength(), EngineOptions.DEFAULT_MAX_CONTEXT);
            long bytesPerBlock = 2L * mc.dims().layers() * mc.attention().kvDim() * config.kvType().bytes * KV_BLOCK_SIZE;
            int blocks = kvBlocks(config, context, bytesPerBlock);
            executor = factory.open(file, mc, context, blocks);
            InferenceEngine engine = new InferenceEngine(config, file, executor, () -> { }, tokenizer, template,
                    new KvCacheConfig(KV_BLOCK_SIZE, blocks), context, mc.dims().vocab());
            engine.loop.start();
            return engine;
        } catch (IllegalArgumentException | IllegalStateException e) {
            if (executor != null) {
                executor.close();
            }
            file.close();
            throw new IOException("cannot run " + config.modelPath() + ": " + e.getMessage(), e);
        } catch (IOException | RuntimeException | Error e) {
            if (executor != null) {
                executor.close();
            }
            file.close();
            throw e;
        }
    }

    private static int kvBlocks(EngineConfig config, int context, long bytesPerBlock) {
        long blocks = config.kvBudgetBytes() > 0 ? config.kvBudgetBytes() / bytesPerBlock
                : (long) config.maxSequences() * ((context + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE);
        if (blocks * KV_BLOCK_SIZE < context) {
            throw new IllegalArgumentException("a KV budget of " + config.kvBudgetBytes() + " bytes holds "
                    + blocks * KV_BLOCK_SIZE + " tokens, less than one context of " + context);
        }
        if (blocks > Integer.MAX_VALUE / KV_BLOCK_SIZE) {
            throw new IllegalArgumentException("KV budget of " + config.kvBudgetBytes() + " bytes is too large");
        }
        return (int) blocks;
    }

    private static void closeQuietly(InferenceSession session, Model model, GgufFile file) {
        if (session != null) {
            session.close();
        }
        if (model != null) {
            model.close();
        }
        file.close();
    }

    /** The file name without {@code .gguf}. */
    public String modelId() {
        String name = config.modelPath().getFileName().toString();
        return name.endsWith(".gguf") ? name.substring(0, name.length() - 5) : name;
    }

    public ModelInfo info() {
        return info;
    }

    /** The kernels computing this engine's steps: in process, or the nodes' (each distinct kind once). */
    public BackendInfo backend() {
        return executor.backend();
    }

    public EngineConfig config() {
        return config;
    }

    public Tokenizer tokenizer() {
        return tokenizer;
    }

    /** The model's template, or the built-in fallback for its architecture. */
    public ChatTemplate chatTemplate() {
        return chatTemplate;
    }

    /**
     * The output processor of a new request: its text goes to {@code listener}, on the request's own thread. Submit
     * it with {@link #submit(RequestOutput, List)}.
     */
    public RequestOutput newRequest(GenerationListener listener, RequestMetrics metrics) {
        return new RequestOutput(loop, () -> new Detokenizer(tokenizer.streamingDetokenizer(false)), listener, metrics,
                () -> closed);
    }

    /**
     * Queues one sequence per choice of {@code request} ({@link RequestOutput#submit}). Non-blocking. A closed engine
     * rejects.
     *
     * @throws IllegalArgumentException if a choice can never run (too long for the context, tokens outside the
     *                                  vocabulary)
     */
    public SubmitResult submit(RequestOutput request, List<GenerationRequest> choices) {
        synchronized (lifecycle) {
            if (closed) {
                return new SubmitResult.Rejected(Duration.ZERO, "engine is shutting down");
            }
            return request.submit(choices);
        }
    }

    /** A request of one choice, without metrics; see {@link #submit(RequestOutput, List)}. */
    public SubmitResult submit(GenerationRequest request, GenerationListener listener) {
        return submit(newRequest(listener, RequestMetrics.NONE), List.of(request));
    }

    /** Cancels a sequence at any point, from any thread; its choice then finishes with {@code cancelled}. */
    public boolean cancel(long sequenceId) {
        return !closed && loop.cancel(sequenceId);
    }

    /**
     * Raw logits of every token-producing row also go to {@code observer} ({@code null} switches it off, the default:
     * nothing is done per token then). For diagnostics; see {@link LogitsObserver}.
     */
    public void observeLogits(LogitsObserver observer) {
        executor.observeLogits(observer);
    }

    public EngineStats stats() {
        record Snapshot(int waiting, int running, KvCacheStats kv, long generated) {}
        Snapshot s = loop.inspect(sch -> new Snapshot(sch.waitingCount(), sch.runningCount(), sch.kvCache().stats(),
                sch.generatedTokens()));
        return new EngineStats(s.waiting(), s.running(), s.kv().blocks().used(), kvBlocks, s.kv().prefix().hitTokens(),
                s.kv().prefix().missTokens(), executor.prefillTokens(), s.generated(), executor.steps());
    }

    /** True while the inference thread runs, the engine is open and its executor can run steps. */
    public boolean ready() {
        return !closed && loop.isRunning() && executor.healthy();
    }

    /** Why {@link #ready()} is false ("" when it is true). */
    public String notReadyReason() {
        if (closed) {
            return "engine closed";
        }
        if (!loop.isRunning()) {
            return "engine stopped";
        }
        return executor.healthy() ? "" : "cluster degraded: " + executor.healthMessage();
    }

    /** Stops the inference thread after the step in flight; requests still in flight finish with ERROR "shutting down". */
    @Override
    public void close() {
        synchronized (lifecycle) {
            if (closed) {
                return;
            }
            closed = true;
        }
        loop.close(); // ends what is in flight as cancelled: the requests' outputs turn that into ERROR "shutting down"
        executor.close();
        closeCompute.run();
        file.close();
    }

    /** The tokenizer's streaming detokenizer as the loop's decoder. */
    private record Detokenizer(StreamingDetokenizer d) implements PieceDecoder {
        @Override
        public String decode(int tokenId) {
            return d.decode(tokenId);
        }

        @Override
        public String flush() {
            return d.flush();
        }
    }
}
