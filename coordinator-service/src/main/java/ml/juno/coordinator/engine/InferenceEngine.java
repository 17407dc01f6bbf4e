package ml.juno.coordinator.engine;

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
import ml.juno.coordinator.tokenizer.StreamingDetokenizer;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;

/**
 * The running engine of one process: scheduler, KV bookkeeping and the generation loop over an executor, with the
 * model's tokenizer and chat template, behind {@code juno local}, {@code juno generate}, the bench and the HTTP API.
 * {@link EngineAssembly} builds it; this class submits, cancels, reports and closes.
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
    private final EngineLora lora;

    private InferenceEngine(EngineAssembly.Parts parts, EngineAssembly.Compute compute) {
        this.config = parts.config();
        this.file = parts.file();
        this.info = parts.info();
        this.tokenizer = parts.tokenizer();
        this.chatTemplate = parts.chatTemplate();
        this.lora = parts.lora();
        this.executor = compute.executor();
        this.closeCompute = compute.close();
        this.kvBlocks = compute.kvBlocks();
        KvCacheManager kv = new KvCacheManager(new KvCacheConfig(KV_BLOCK_SIZE, kvBlocks));
        Scheduler scheduler = new Scheduler(new SchedulerConfig(config.maxBatchTokens(), config.maxSequences(),
                config.maxQueue(), info.contextLength(), Duration.ofSeconds(1)), kv, info.vocabSize());
        this.loop = new GenerationLoop(scheduler, executor);
    }

    /** The running engine over what {@link EngineAssembly} built; its inference thread started. */
    static InferenceEngine start(EngineAssembly.Parts parts, EngineAssembly.Compute compute) {
        InferenceEngine engine = new InferenceEngine(parts, compute);
        engine.loop.start();
        return engine;
    }

    /** The LoRA adapters this engine serves. */
    public EngineLora lora() {
        return lora;
    }

    /** The file name without {@code .gguf}. */
    public String modelId() {
        String name = config.modelPath().getFileName().toString();
        return name.endsWith(".gguf") ? name.substring(0, name.length() - 5) : name;
    }

    public ModelInfo info() {
        return info;
    }

    /**
     * How this model's embeddings are pooled: the file's {@code <arch>.pooling_type}, {@code mean} when absent.
     *
     * @throws IllegalArgumentException when the file declares a pooling Juno does not support (rank)
     */
    public ml.juno.engine.embedding.Pooling pooling() {
        return ml.juno.engine.embedding.Pooling.of(file);
    }

    /** Floats per embedding: the model's hidden size ({@code <arch>.embedding_length}). */
    public int embeddingLength() {
        return file.metadata().getInt(info.architecture() + "." + ml.juno.engine.gguf.GgufKeys.EMBEDDING_LENGTH);
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
        return submit(request, choices, choices.size());
    }

    /**
     * As {@link #submit(RequestOutput, List)} for several prompts, {@code perPrompt} choices each
     * ({@link RequestOutput#submit(List, int)}); submitted together, they share steps.
     */
    public SubmitResult submit(RequestOutput request, List<GenerationRequest> choices, int perPrompt) {
        for (GenerationRequest c : choices) {
            if (c.adapter() > lora.modules().size()) {
                throw new IllegalArgumentException("LoRA adapter " + c.adapter() + " is not one of the engine's "
                        + lora.modules().size() + " named adapters");
            }
        }
        synchronized (lifecycle) {
            if (closed) {
                return new SubmitResult.Rejected(Duration.ZERO, "engine is shutting down");
            }
            return request.submit(choices, perPrompt);
        }
    }

    /**
     * A new embeddings request: submit its inputs one by one ({@link EmbeddingOutput#submit}), then {@link
     * EmbeddingOutput#await}. They run through the scheduler as prefill-only sequences, batched with everything else,
     * in process or on a cluster (the last pipeline stage or tensor rank 0 returns the rows' final hidden states).
     */
    public EmbeddingOutput newEmbeddings() {
        return new EmbeddingOutput(loop, () -> closed);
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

    /** Where this engine's steps run (in process, or the nodes and their state). */
    public Topology topology() {
        return executor.topology();
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
