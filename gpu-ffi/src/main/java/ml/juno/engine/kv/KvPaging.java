package ml.juno.engine.kv;

/**
 * Paged KV memory: a pool of {@code numBlocks} blocks of {@code blockSize} positions each (per layer, keys and values
 * alike). A sequence slot reaches its positions through a block table (logical block → physical block id), so two
 * sequences can share the blocks of a common prefix without copying. Block ids are assigned by the caller's KV
 * bookkeeping (the coordinator's KvCacheManager); this side only stores.
 */
public record KvPaging(int blockSize, int numBlocks) {
    public KvPaging {
        if (blockSize <= 0 || numBlocks <= 0) {
            throw new IllegalArgumentException("bad KV paging: block size " + blockSize + ", blocks " + numBlocks);
        }
    }

    /** Positions the whole pool holds. */
    public long capacityPositions() {
        return (long) blockSize * numBlocks;
    }

    /** Blocks a table needs to cover {@code positions} positions. */
    public int blocksFor(int positions) {
        return (positions + blockSize - 1) / blockSize;
    }
}
