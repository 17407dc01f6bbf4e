package ml.juno.coordinator.kvcache;

/**
 * Size of the paged KV pool.
 *
 * @param blockSize     tokens per block (16 is vLLM's default)
 * @param numBlocks     blocks in the pool
 * @param prefixCaching share computed full blocks between requests; only for executors that address KV by
 *                      block id (an executor with one flat KV area per slot must run with it off)
 */
public record KvCacheConfig(int blockSize, int numBlocks, boolean prefixCaching) {

    /** Prefix caching on. */
    public KvCacheConfig(int blockSize, int numBlocks) {
        this(blockSize, numBlocks, true);
    }

    public KvCacheConfig {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be > 0, got " + blockSize);
        }
        if (numBlocks <= 0) {
            throw new IllegalArgumentException("block count must be > 0, got " + numBlocks);
        }
    }

    /** As many blocks as fit in {@code budgetBytes} for tokens of the given layout. */
    public static KvCacheConfig forBudget(long budgetBytes, KvLayout layout, int blockSize, boolean prefixCaching) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be > 0, got " + blockSize);
        }
        long bytesPerBlock = layout.bytesPerToken() * blockSize;
        long blocks = budgetBytes / bytesPerBlock;
        if (blocks < 1) {
            throw new IllegalArgumentException("KV budget of " + budgetBytes + " bytes holds no block of "
                    + bytesPerBlock + " bytes");
        }
        return new KvCacheConfig(blockSize, (int) Math.min(blocks, Integer.MAX_VALUE), prefixCaching);
    }

    /** Tokens the whole pool can hold. */
    public long capacityTokens() {
        return (long) blockSize * numBlocks;
    }
}
