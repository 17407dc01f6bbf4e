package ml.juno.coordinator.kvcache;

/**
 * Snapshot of the KV bookkeeping.
 *
 * @param prefix prefix-cache counters since start
 * @param blocks block usage now
 */
public record KvCacheStats(PrefixCounters prefix, BlockUsage blocks) {

    /**
     * @param hitTokens   prompt tokens served from cached blocks
     * @param missTokens  prompt tokens that had to be computed
     * @param hitBlocks   full prompt blocks found in the cache
     * @param missBlocks  full prompt blocks looked up and not found
     * @param evictions   cached blocks reclaimed for new allocations
     */
    public record PrefixCounters(long hitTokens, long missTokens, long hitBlocks, long missBlocks, long evictions) {
    }

    /**
     * @param used   blocks referenced by at least one sequence
     * @param cached blocks referenced by none but holding a reusable prefix (evictable)
     * @param free   blocks holding nothing
     * @param total  pool size: used + cached + free
     */
    public record BlockUsage(int used, int cached, int free, int total) {
    }
}
