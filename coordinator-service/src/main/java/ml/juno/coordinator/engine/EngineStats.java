package ml.juno.coordinator.engine;

/**
 * Snapshot of an engine. Counters run since the engine started ({@link EngineAssembly#open(EngineConfig)}).
 *
 * @param queued           requests waiting to start (or preempted, waiting to resume)
 * @param running          sequences in the running batch
 * @param kvBlocksUsed     KV blocks referenced by a live sequence (cached prefix blocks not counted)
 * @param kvBlocksTotal    KV blocks in the pool
 * @param prefixHitTokens  prompt tokens found in the prefix cache at admission (not computed)
 * @param prefixMissTokens prompt tokens not found there at admission
 * @param promptTokens     tokens run through prefill (prompt tokens, and recomputation after a preemption)
 * @param generatedTokens  tokens sampled (end-of-generation tokens included)
 * @param steps            forward steps executed
 */
public record EngineStats(int queued, int running, int kvBlocksUsed, int kvBlocksTotal, long prefixHitTokens,
                          long prefixMissTokens, long promptTokens, long generatedTokens, long steps) {
}
