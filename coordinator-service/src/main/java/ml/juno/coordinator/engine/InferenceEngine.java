package ml.juno.coordinator.engine;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import ml.juno.coordinator.kvcache.KvCacheConfig;
import ml.juno.coordinator.kvcache.KvCacheManager;
import ml.juno.coordinator.kvcache.KvCacheStats;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.Scheduler;
import ml.juno.coordinator.scheduler.SchedulerConfig;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
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
    private static final String SHUTTING_DOWN = "shutting down";

    private final EngineConfig config;
    private final GgufFile file;
    private final Runnable closeCompute; // the in-process model and session, or nothing (a cluster)
    private final Tokenizer tokenizer;
    private final ChatTemplate chatTemplate;
    private final ManagedExecutor executor;
    private final GenerationLoop loop;
    private final ModelInfo info;
    private final int kvBlocks;
    private final Set<TrackedSink> inFlight = ConcurrentHashMap.newKeySet();
    private final Object lifecycle = new Object();
    private volatile long generatedTokens;
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
     * Queues a request. Non-blocking; the sink's callbacks run on the inference thread and must not block. A closed
     * engine rejects.
     *
     * @throws IllegalArgumentException if the request can never run (too long for the context, tokens outside the
     *                                  vocabulary)
     */
    public SubmitResult submit(GenerationRequest request, TokenSink sink) {
        TrackedSink tracked = new TrackedSink(sink, request.promptTokens().length);
        synchronized (lifecycle) {
            if (closed) {
                return new SubmitResult.Rejected(Duration.ZERO, "engine is shutting down");
            }
            inFlight.add(tracked);
            try {
                SubmitResult r = loop.submit(request, new Detokenizer(tokenizer.streamingDetokenizer(false)), tracked);
                if (!(r instanceof SubmitResult.Accepted)) {
                    inFlight.remove(tracked);
                }
                return r;
            } catch (RuntimeException e) {
                inFlight.remove(tracked);
                throw e;
            }
        }
    }

    /** Cancels a request at any point, from any thread; its sink then gets {@code onFinish(CANCELLED)}. */
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
        record Snapshot(int waiting, int running, KvCacheStats kv) {}
        Snapshot s = loop.inspect(sch -> new Snapshot(sch.waitingCount(), sch.runningCount(), sch.kvCache().stats()));
        return new EngineStats(s.waiting(), s.running(), s.kv().blocks().used(), kvBlocks, s.kv().prefix().hitTokens(),
                s.kv().prefix().missTokens(), executor.prefillTokens(), generatedTokens, executor.steps());
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
        loop.close(); // ends what is in flight as cancelled: the tracked sinks turn that into ERROR "shutting down"
        List<TrackedSink> left = new ArrayList<>(inFlight);
        inFlight.clear();
        for (TrackedSink t : left) {
            t.shutDown();
        }
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

    /** Counts tokens, forgets the request when it ends, and lets close() finish what the loop did not. */
    private final class TrackedSink implements TokenSink {
        private final TokenSink sink;
        private final int promptTokens;
        private int streamed;
        private boolean finished;

        TrackedSink(TokenSink sink, int promptTokens) {
            this.sink = sink;
            this.promptTokens = promptTokens;
        }

        @Override
        public void onToken(int tokenId, String text, TokenLogprobs logprobs) {
            streamed++;
            generatedTokens++; // single writer: the inference thread
            try {
                sink.onToken(tokenId, text, logprobs);
            } catch (Error e) {
                throw failed(e);
            }
        }

        @Override
        public void onText(String text) {
            try {
                sink.onText(text);
            } catch (Error e) {
                throw failed(e);
            }
        }

        @Override
        public void onFinish(FinishReason reason, Usage usage, String message) {
            if (finished) {
                return;
            }
            finished = true;
            inFlight.remove(this);
            generatedTokens += Math.max(0, usage.completionTokens() - streamed); // an end-of-generation token
            boolean shutdown = closed && reason == FinishReason.CANCELLED;
            try {
                sink.onFinish(shutdown ? FinishReason.ERROR : reason, usage, shutdown ? SHUTTING_DOWN : message);
            } catch (Error e) {
                throw failed(e);
            }
        }

        /** After the loop stopped (no other thread calls this sink any more). */
        void shutDown() {
            if (!finished) {
                finished = true;
                try {
                    sink.onFinish(FinishReason.ERROR, new Usage(promptTokens, streamed, 0), SHUTTING_DOWN);
                } catch (RuntimeException ignored) {
                    // the engine is closing either way
                }
            }
        }

        /** A sink that fails with an Error must not kill the inference thread: it becomes an exception (cancels). */
        private static IllegalStateException failed(Error e) {
            return new IllegalStateException("token sink failed: " + e, e);
        }
    }
}
