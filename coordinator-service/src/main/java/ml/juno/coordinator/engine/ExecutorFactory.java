package ml.juno.coordinator.engine;

import java.io.IOException;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.model.ModelConfig;

/**
 * Builds the executor of an {@link InferenceEngine} that does not compute in process (a cluster of nodes). The
 * engine keeps the tokenizer, scheduler and KV bookkeeping; the executor computes steps whose block ids come from a
 * pool of {@code kvBlocks} blocks of {@link InferenceEngine#KV_BLOCK_SIZE} tokens.
 */
@FunctionalInterface
public interface ExecutorFactory {
    ManagedExecutor open(GgufFile file, ModelConfig model, int contextLength, int kvBlocks) throws IOException;
}
