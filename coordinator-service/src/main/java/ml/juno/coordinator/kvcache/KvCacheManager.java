package ml.juno.coordinator.kvcache;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Policy;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import ml.juno.coordinator.jfr.KvCacheEvent;

/**
 * Paged KV bookkeeping with automatic prefix caching (vLLM's KVCacheManager idea).
 *
 * <p>Every block is in exactly one state: <b>used</b> (reference count &gt; 0), <b>cached</b> (count 0
 * but registered under the hash of the prefix it holds, so a later request with the same prefix can
 * take it back without recomputing) or <b>free</b>. A block is registered only once its tokens are
 * computed ({@link #commit}). When a new block is needed and none is free, the least recently released
 * cached block is evicted (LRU, as vLLM). A sequence releases its blocks last-first, so a prefix loses its
 * tail before its head and shared heads live longest. The cached set and its order live in a Caffeine
 * cache read through its access-order policy with a logical clock (deterministic); Caffeine's size-based
 * W-TinyLFU is not used, because its order over entries that come and go with every reuse was measured
 * to be neither recency- nor frequency-preserving here.
 *
 * <p>Not thread-safe: owned by the generation loop's thread.
 */
public final class KvCacheManager {
    private final int blockSize;
    private final int numBlocks;
    private final boolean prefixCaching;
    private final int[] refCount;      // [numBlocks]
    private final boolean[] registered; // [numBlocks] holds a committed, findable prefix
    private final long[] blockHash;    // [numBlocks] chain hash when registered
    private final long[] parentHash;   // [numBlocks] parent chain hash when registered
    private final int[] blockTokens;   // [numBlocks * blockSize] tokens of registered blocks, to rule out collisions
    private final int[] freeStack;     // [numBlocks] free block ids, top at freeTop - 1
    private int freeTop;
    private int used;
    private int cached;

    /** hash → block for every registered block (used or cached). */
    private final Map<Long, Integer> index = new HashMap<>();
    /** The cached (evictable) blocks only, in Caffeine's access order: least recently released first. */
    private final Cache<Long, Integer> evictable;
    private final Policy.FixedExpiration<Long, Integer> lru;
    private long clock;
    private static final Duration NEVER = Duration.ofDays(365L * 100); // in ticks of the logical clock: never reached

    private long hitTokens;
    private long missTokens;
    private long hitBlocks;
    private long missBlocks;
    private long evictions;

    public KvCacheManager(KvCacheConfig config) {
        this.blockSize = config.blockSize();
        this.numBlocks = config.numBlocks();
        this.prefixCaching = config.prefixCaching();
        this.refCount = new int[numBlocks];
        this.registered = new boolean[numBlocks];
        this.blockHash = new long[numBlocks];
        this.parentHash = new long[numBlocks];
        this.blockTokens = new int[Math.multiplyExact(numBlocks, blockSize)];
        this.freeStack = new int[numBlocks];
        for (int i = 0; i < numBlocks; i++) {
            freeStack[i] = numBlocks - 1 - i; // block 0 is handed out first
        }
        this.freeTop = numBlocks;
        this.evictable = Caffeine.newBuilder()
                .ticker(() -> ++clock) // logical clock: every operation is one tick, so the order is deterministic
                .expireAfterAccess(NEVER) // nothing ever expires; only its access order is used
                .executor(Runnable::run) // maintenance on this thread, so state stays in step
                .build();
        this.lru = evictable.policy().expireAfterAccess().orElseThrow();
    }

    public int blockSize() {
        return blockSize;
    }

    public int numBlocks() {
        return numBlocks;
    }

    /** Blocks needed to hold {@code tokens} tokens. */
    public int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }

    /** Blocks that can be handed out now: free ones plus evictable cached ones. */
    public int availableBlocks() {
        return freeTop + cached;
    }

    public int refCount(int block) {
        return refCount[block];
    }

    /**
     * Starts a sequence: attaches the longest cached prefix of {@code tokens[0..length)} (whole blocks,
     * leaving at least the last token to compute, since its logits are needed), then allocates blocks
     * for up to {@code maxNewTokens} more tokens. All or nothing.
     *
     * @param table an empty table for the sequence
     * @return tokens already in the cache (a multiple of the block size), or -1 when there are not
     *         enough blocks (nothing is changed then)
     */
    public int admit(BlockTable table, int[] tokens, int length, int maxNewTokens) {
        return admit(table, tokens, length, maxNewTokens, 0);
    }

    /** {@link #admit(BlockTable, int[], int, int)} for a sequence of named LoRA adapter {@code adapter} (its own prefix chain). */
    public int admit(BlockTable table, int[] tokens, int length, int maxNewTokens, int adapter) {
        return admit(table, tokens, length, maxNewTokens, adapter, Integer.MAX_VALUE);
    }

    /**
     * {@link #admit(BlockTable, int[], int, int, int)} taking at most {@code maxCachedTokens} from the prefix cache
     * (a sequence that scores its prompt has to compute the positions it has not scored yet).
     */
    public int admit(BlockTable table, int[] tokens, int length, int maxNewTokens, int adapter, int maxCachedTokens) {
        if (table.blockCount() != 0) {
            throw new IllegalStateException("admit needs an empty block table, got " + table);
        }
        if (length < 1 || length > tokens.length) {
            throw new IllegalArgumentException("prompt length " + length + " outside [1, " + tokens.length + "]");
        }
        if (maxNewTokens < 1) {
            throw new IllegalArgumentException("maxNewTokens must be >= 1, got " + maxNewTokens);
        }
        long evictionsBefore = evictions;
        int lookupBlocks = prefixCaching ? Math.min((length - 1) / blockSize, Math.max(0, maxCachedTokens) / blockSize) : 0;
        long parent = PrefixHash.root(adapter);
        int hits = 0;
        while (hits < lookupBlocks) {
            long h = PrefixHash.of(parent, tokens, hits * blockSize, blockSize);
            Integer block = index.get(h);
            if (block == null || !holds(block, parent, tokens, hits * blockSize)) {
                break;
            }
            acquire(block, h);
            table.add(block);
            table.setHash(hits, h);
            parent = h;
            hits++;
        }
        int cachedTokens = hits * blockSize;
        int chunk = Math.min(length - cachedTokens, maxNewTokens);
        if (!allocateSlots(table, cachedTokens + chunk)) {
            free(table);
            return -1;
        }
        hitBlocks += hits;
        missBlocks += lookupBlocks - hits;
        hitTokens += cachedTokens;
        missTokens += length - cachedTokens;
        if (KvCacheEvent.enabled()) {
            KvCacheEvent.emit(cachedTokens, length - cachedTokens, evictions - evictionsBefore, used, cached, freeTop);
        }
        return cachedTokens;
    }

    /**
     * Starts a sequence that must compute every token (an embedding): no prefix is looked up, blocks are allocated for
     * up to {@code maxNewTokens} of its {@code length} tokens. All or nothing.
     *
     * @return 0, or -1 when there are not enough blocks (nothing is changed then)
     */
    public int admitUncached(BlockTable table, int length, int maxNewTokens) {
        if (table.blockCount() != 0) {
            throw new IllegalStateException("admit needs an empty block table, got " + table);
        }
        if (length < 1 || maxNewTokens < 1) {
            throw new IllegalArgumentException("length " + length + " and maxNewTokens " + maxNewTokens + " must be >= 1");
        }
        return allocateSlots(table, Math.min(length, maxNewTokens)) ? 0 : -1;
    }

    /**
     * Makes {@code table} cover positions {@code [0, totalTokens)}, taking free blocks first and evicting
     * cached ones when none is free. All or nothing.
     *
     * @return false when the pool cannot supply enough blocks (nothing is changed then)
     */
    public boolean allocateSlots(BlockTable table, int totalTokens) {
        int need = blocksFor(totalTokens) - table.blockCount();
        if (need <= 0) {
            return true;
        }
        if (need > availableBlocks()) {
            return false;
        }
        for (int i = 0; i < need; i++) {
            table.add(takeBlock());
        }
        return true;
    }

    /**
     * Registers the blocks that {@code computedTokens} computed tokens have filled, so later requests
     * can share them. Call after the step that computed them succeeded.
     *
     * @param tokens the sequence's tokens, at least {@code computedTokens} of them
     */
    public void commit(BlockTable table, int[] tokens, int computedTokens) {
        commit(table, tokens, computedTokens, 0);
    }

    /** {@link #commit(BlockTable, int[], int)} for a sequence of named LoRA adapter {@code adapter}. */
    public void commit(BlockTable table, int[] tokens, int computedTokens, int adapter) {
        if (!prefixCaching) {
            return;
        }
        int full = Math.min(computedTokens / blockSize, table.blockCount());
        for (int b = table.hashedCount(); b < full; b++) {
            long parent = b == 0 ? PrefixHash.root(adapter) : table.hash(b - 1);
            long h = PrefixHash.of(parent, tokens, b * blockSize, blockSize);
            table.setHash(b, h);
            int block = table.block(b);
            if (!registered[block] && !index.containsKey(h)) {
                registered[block] = true;
                blockHash[block] = h;
                parentHash[block] = parent;
                System.arraycopy(tokens, b * blockSize, blockTokens, block * blockSize, blockSize);
                index.put(h, block);
            }
            // else: another sequence registered the same prefix first; this copy stays private
        }
    }

    /** Releases every block of the table (last block first, so tails are evicted before heads) and empties it. */
    public void free(BlockTable table) {
        while (table.blockCount() > 0) {
            release(table.removeLast());
        }
    }

    /**
     * Forgets every cached prefix: the memory behind the blocks is gone (a node restarted and reloaded its shard). Cached
     * blocks return to the free pool; blocks still held by sequences stay theirs but are no longer found by new
     * requests. Counts as evictions.
     */
    public void forgetPrefixes() {
        for (int block = 0; block < numBlocks; block++) {
            if (!registered[block]) {
                continue;
            }
            if (refCount[block] == 0) {
                evictable.invalidate(blockHash[block]);
                cached--;
                freeStack[freeTop++] = block;
                evictions++;
            }
            unregister(block);
        }
    }

    public KvCacheStats stats() {
        return new KvCacheStats(
                new KvCacheStats.PrefixCounters(hitTokens, missTokens, hitBlocks, missBlocks, evictions),
                new KvCacheStats.BlockUsage(used, cached, freeTop, numBlocks));
    }

    private boolean holds(int block, long parent, int[] tokens, int from) {
        if (parentHash[block] != parent) {
            return false;
        }
        int base = block * blockSize;
        for (int i = 0; i < blockSize; i++) {
            if (blockTokens[base + i] != tokens[from + i]) {
                return false;
            }
        }
        return true;
    }

    private void acquire(int block, long hash) {
        if (refCount[block] == 0) {
            evictable.invalidate(hash);
            cached--;
            used++;
        }
        refCount[block]++;
    }

    private void release(int block) {
        if (refCount[block] <= 0) {
            throw new IllegalStateException("block " + block + " released more often than taken");
        }
        if (--refCount[block] > 0) {
            return;
        }
        used--;
        if (registered[block]) {
            cached++;
            evictable.put(blockHash[block], block);
        } else {
            freeStack[freeTop++] = block;
        }
    }

    private int takeBlock() {
        int block;
        if (freeTop > 0) {
            block = freeStack[--freeTop];
        } else {
            block = evictColdest();
        }
        refCount[block] = 1;
        used++;
        return block;
    }

    private int evictColdest() {
        Map<Long, Integer> oldest = lru.oldest(1);
        if (oldest.isEmpty()) {
            throw new IllegalStateException("no free or cached block left (used " + used + " of " + numBlocks + ")");
        }
        var e = oldest.entrySet().iterator().next();
        evictable.invalidate(e.getKey());
        int block = e.getValue();
        unregister(block);
        cached--;
        evictions++;
        return block;
    }

    private void unregister(int block) {
        index.remove(blockHash[block]);
        registered[block] = false;
    }
}
