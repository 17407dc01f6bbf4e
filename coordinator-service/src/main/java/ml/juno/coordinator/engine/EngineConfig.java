package ml.juno.coordinator.engine;

import java.nio.file.Path;
import ml.juno.engine.kv.KvType;

/**
 * Settings for one in-process engine.
 *
 * @param modelPath      the GGUF file
 * @param threads        compute threads; 0 = all cores
 * @param contextLength  positions per sequence (prompt + generated); 0 = the model's own, capped at 4096
 * @param kvType         KV element type (F16 halves the memory; F32 matches llama.cpp's references exactly)
 * @param kvBudgetBytes  bytes of the paged KV pool; 0 = enough for {@code maxSequences} full contexts
 * @param maxSequences   sequences in the running batch at most
 * @param maxBatchTokens tokens in one forward step at most (decode rows + prefill chunks)
 * @param maxQueue       requests waiting at most; beyond it submissions are rejected with a retry-after
 */
public record EngineConfig(Path modelPath, int threads, int contextLength, KvType kvType, long kvBudgetBytes,
                           int maxSequences, int maxBatchTokens, int maxQueue) {

    public EngineConfig {
        if (modelPath == null || kvType == null) {
            throw new IllegalArgumentException("model path and KV type are required");
        }
        if (threads < 0 || contextLength < 0 || kvBudgetBytes < 0 || maxSequences < 1 || maxQueue < 0) {
            throw new IllegalArgumentException("bad engine config: threads " + threads + ", context " + contextLength
                    + ", KV budget " + kvBudgetBytes + ", sequences " + maxSequences + ", queue " + maxQueue);
        }
        if (maxBatchTokens < maxSequences) {
            throw new IllegalArgumentException("maxBatchTokens (" + maxBatchTokens
                    + ") must cover one decode token per sequence (" + maxSequences + ")");
        }
    }

    /**
     * Sensible defaults for a small (2-core) machine: all cores, the model's context (capped), F16 KV sized for 4
     * sequences, steps of up to 512 tokens, 64 requests queued.
     */
    public static EngineConfig defaults(Path modelPath) {
        return new EngineConfig(modelPath, 0, 0, KvType.F16, 0, 4, 512, 64);
    }

    public EngineConfig withThreads(int t) {
        return new EngineConfig(modelPath, t, contextLength, kvType, kvBudgetBytes, maxSequences, maxBatchTokens, maxQueue);
    }

    public EngineConfig withContextLength(int c) {
        return new EngineConfig(modelPath, threads, c, kvType, kvBudgetBytes, maxSequences, maxBatchTokens, maxQueue);
    }

    public EngineConfig withKvType(KvType k) {
        return new EngineConfig(modelPath, threads, contextLength, k, kvBudgetBytes, maxSequences, maxBatchTokens, maxQueue);
    }

    public EngineConfig withKvBudgetBytes(long b) {
        return new EngineConfig(modelPath, threads, contextLength, kvType, b, maxSequences, maxBatchTokens, maxQueue);
    }

    /** Also raises {@code maxBatchTokens} to {@code s} if it was smaller. */
    public EngineConfig withMaxSequences(int s) {
        return new EngineConfig(modelPath, threads, contextLength, kvType, kvBudgetBytes, s, Math.max(maxBatchTokens, s), maxQueue);
    }

    public EngineConfig withMaxBatchTokens(int b) {
        return new EngineConfig(modelPath, threads, contextLength, kvType, kvBudgetBytes, maxSequences, b, maxQueue);
    }

    public EngineConfig withMaxQueue(int q) {
        return new EngineConfig(modelPath, threads, contextLength, kvType, kvBudgetBytes, maxSequences, maxBatchTokens, q);
    }
}
