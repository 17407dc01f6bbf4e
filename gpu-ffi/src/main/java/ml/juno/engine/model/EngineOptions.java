package ml.juno.engine.model;

import ml.juno.engine.kv.KvType;

/**
 * How to run a model: compute threads, context length to size the KV cache for ({@code 0} = the model's own, capped at
 * {@value #DEFAULT_MAX_CONTEXT}), KV element type, most rows in one forward batch, and sequence slots.
 */
public record EngineOptions(int threads, int contextLength, KvType kvType, int maxBatch, int maxSequences) {
    public static final int DEFAULT_MAX_CONTEXT = 4096;

    public EngineOptions {
        if (threads <= 0 || contextLength < 0 || kvType == null || maxBatch <= 0 || maxSequences <= 0) {
            throw new IllegalArgumentException("bad engine options: threads " + threads + ", context " + contextLength
                    + ", kv " + kvType + ", max batch " + maxBatch + ", sequences " + maxSequences);
        }
    }

    /** All cores, the model's context (capped), F32 KV, batches up to 512 rows, one sequence. */
    public static EngineOptions defaults() {
        return new EngineOptions(Runtime.getRuntime().availableProcessors(), 0, KvType.F32, 512, 1);
    }

    public EngineOptions withThreads(int t) {
        return new EngineOptions(t, contextLength, kvType, maxBatch, maxSequences);
    }

    public EngineOptions withContextLength(int c) {
        return new EngineOptions(threads, c, kvType, maxBatch, maxSequences);
    }

    public EngineOptions withKvType(KvType k) {
        return new EngineOptions(threads, contextLength, k, maxBatch, maxSequences);
    }

    public EngineOptions withMaxBatch(int b) {
        return new EngineOptions(threads, contextLength, kvType, b, maxSequences);
    }

    public EngineOptions withMaxSequences(int s) {
        return new EngineOptions(threads, contextLength, kvType, maxBatch, s);
    }
}
