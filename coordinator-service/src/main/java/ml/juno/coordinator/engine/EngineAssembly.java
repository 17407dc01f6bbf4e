package ml.juno.coordinator.engine;

import java.io.IOException;
import java.util.List;
import ml.juno.coordinator.tokenizer.ChatTemplate;
import ml.juno.coordinator.tokenizer.ChatTemplates;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.lora.LoraAdapters;
import ml.juno.engine.lora.LoraPlan;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvPaging;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.ModelConfig;

/**
 * Builds an {@link InferenceEngine}: opens the GGUF, reads the model's configuration, builds its tokenizer and chat
 * template, decides the context and sizes the KV pool (once, the same way for every executor), then the executor that
 * computes the steps: in process ({@link #open(EngineConfig)}) or on nodes ({@link #open(EngineConfig, ExecutorFactory)}).
 * Whatever fails on the way is closed again; the running engine owns what it gets.
 */
public final class EngineAssembly {

    /** What every engine is built from, whichever executor computes its steps. */
    record Parts(EngineConfig config, GgufFile file, ModelInfo info, Tokenizer tokenizer, ChatTemplate chatTemplate,
                 EngineLora lora) {
    }

    /** The executor of an engine, what closes the compute behind it, and the KV pool it was sized for. */
    record Compute(ManagedExecutor executor, Runnable close, int kvBlocks) {
    }

    /** Builds the compute for a model whose context and KV pool are decided. */
    @FunctionalInterface
    private interface ComputeFactory {
        Compute open(GgufFile file, ModelConfig model, int contextLength, int kvBlocks) throws IOException;
    }

    private EngineAssembly() {
    }

    /**
     * Loads the model in process, sizes the KV pool and starts the inference thread ({@code juno local}, {@code juno
     * generate}, the bench).
     *
     * @throws IOException when the file cannot be read or is not a model this engine runs (the message says why)
     */
    public static InferenceEngine open(EngineConfig config) throws IOException {
        return open(config, EngineLora.NONE);
    }

    /**
     * {@link #open(EngineConfig)} playing the LoRA adapters {@code lora} on every request (summed; each checked against
     * the model before the engine starts).
     */
    public static InferenceEngine open(EngineConfig config, EngineLora lora) throws IOException {
        return assemble(config, lora, (file, model, context, kvBlocks) -> local(config, file, context, kvBlocks, lora));
    }

    /**
     * Tokenizer, scheduler and KV bookkeeping here, compute in the executor {@code factory} builds (a cluster of
     * nodes). Prefix caching is on: when a node goes down its KV memory may
     * be lost, so the loop forgets every cached prefix before the next step ({@link Executor#kvEpoch}).
     */
    public static InferenceEngine open(EngineConfig config, ExecutorFactory factory) throws IOException {
        return open(config, factory, EngineLora.NONE);
    }

    /**
     * {@link #open(EngineConfig, ExecutorFactory)} whose executor (the nodes) plays {@code lora}; the engine maps the
     * named adapters' ids.
     */
    public static InferenceEngine open(EngineConfig config, ExecutorFactory factory, EngineLora lora) throws IOException {
        return assemble(config, lora, (file, model, context, kvBlocks) ->
                new Compute(factory.open(file, model, context, kvBlocks), () -> { }, kvBlocks));
    }

    private static InferenceEngine assemble(EngineConfig config, EngineLora lora, ComputeFactory computeFactory) throws IOException {
        GgufFile file = GgufFile.open(config.modelPath());
        Compute compute = null;
        try {
            Tokenizer tokenizer = Tokenizer.fromGguf(file);
            ChatTemplate template = ChatTemplates.forModel(file.metadata(), tokenizer);
            ModelConfig mc = Architectures.forName(file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(file);
            int context = config.contextLength() > 0 ? config.contextLength()
                    : Math.min(mc.dims().contextLength(), EngineOptions.DEFAULT_MAX_CONTEXT);
            int blocks = kvBlocks(config, context, mc);
            compute = computeFactory.open(file, mc, context, blocks);
            Parts parts = new Parts(config, file, info(file, mc, context, config), tokenizer, template, lora);
            return InferenceEngine.start(parts, compute);
        } catch (IllegalArgumentException | IllegalStateException | OutOfMemoryError e) {
            closeQuietly(compute, file);
            throw new IOException("cannot run " + config.modelPath() + ": " + e.getMessage(), e);
        } catch (IOException | RuntimeException | Error e) {
            closeQuietly(compute, file);
            throw e;
        }
    }

    /** The model and a paged session whose pool has the block ids the scheduler hands out. */
    private static Compute local(EngineConfig config, GgufFile file, int context, int blocks, EngineLora lora) {
        int threads = config.threads() > 0 ? config.threads() : Runtime.getRuntime().availableProcessors();
        Model model = Model.load(file, new EngineOptions(threads, context, config.kvType(), config.maxBatchTokens(),
                config.maxSequences()), Backends::select);
        try {
            if (!lora.isEmpty()) {
                try {
                    List<LoraPlan.Played> all = new java.util.ArrayList<>(LoraAdapters.play(lora.play(), file));
                    all.addAll(LoraAdapters.modules(lora.modules(), file));
                    LoraPlan.apply(model, all);
                } catch (IOException e) {
                    throw new IllegalArgumentException(e.getMessage(), e);
                }
            }
            InferenceSession session = model.newPagedSession(new KvPaging(InferenceEngine.KV_BLOCK_SIZE, blocks));
            return new Compute(new LocalExecutor(session, InferenceEngine.KV_BLOCK_SIZE), () -> {
                session.close();
                model.close();
            }, blocks);
        } catch (RuntimeException | Error e) {
            model.close();
            throw e;
        }
    }

    /** Blocks of {@link InferenceEngine#KV_BLOCK_SIZE} tokens in the KV budget (K and V of every layer). */
    static int kvBlocks(EngineConfig config, int context, ModelConfig mc) {
        int bs = InferenceEngine.KV_BLOCK_SIZE;
        long bytesPerBlock = 2L * mc.dims().layers() * mc.attention().kvDim() * config.kvType().bytes * bs;
        long blocks = config.kvBudgetBytes() > 0 ? config.kvBudgetBytes() / bytesPerBlock
                : (long) config.maxSequences() * ((context + bs - 1) / bs);
        if (blocks * bs < context) {
            throw new IllegalArgumentException("a KV budget of " + config.kvBudgetBytes() + " bytes holds "
                    + blocks * bs + " tokens, less than one context of " + context);
        }
        if (blocks > Integer.MAX_VALUE / bs) {
            throw new IllegalArgumentException("KV budget of " + config.kvBudgetBytes() + " bytes is too large");
        }
        return (int) blocks;
    }

    private static ModelInfo info(GgufFile file, ModelConfig mc, int context, EngineConfig config) {
        long params = 0;
        long bytes = 0;
        for (GgufTensorInfo t : file.tensors()) {
            params += t.elementCount();
            bytes += t.byteSize();
        }
        return new ModelInfo(file.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE), context, mc.dims().vocab(), params, bytes,
                config.modelPath());
    }

    private static void closeQuietly(Compute compute, GgufFile file) {
        if (compute != null) {
            compute.executor().close();
            compute.close().run();
        }
        file.close();
    }
}
