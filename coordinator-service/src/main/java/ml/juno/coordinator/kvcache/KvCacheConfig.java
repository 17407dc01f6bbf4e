package ml.juno.coordinator.kvcache;

/**
 * Size of the paged KV pool.
 *
 * @param blockSize tokens per block (16 is vLLM's default)
 * @param numBlocks blocks in the pool
 */
public record KvCacheConfig(int blockSize, int numBlocks) {
    public KvCacheConfig {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be > 0, got " + blockSize);
        }
        if (numBlocks <= 0) {
            throw new IllegalArgumentException("block count must be > 0, got " + numBlocks);
        }
    }

    /** As many blocks as fit in {@code budgetBytes} for tokens of the given layout. */
    public static KvCacheConfig forBudget(long budgetBytes, KvLayout layout, int blockSize) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be > 0, got " + blockSize);
        }
        long bytesPerBlock = layout.bytesPerToken() * blockSize;
        long blocks = budgetBytes / bytesPerBlock;
        if (blocks < 1) {
            throw new IllegalArgumentException("KV budget of " + budgetBytes + " bytes holds no block of "
                    + bytesPerBlock + " bytes");
        }
        return new KvCacheConfig(blockSize, (int) Math.min(blocks, Integer.MAX_VALUE));
    }

    /** Tokens the whole pool can hold. */
    public long capacityTokens() {
        return (long) blockSize * numBlocks;
    }
}
