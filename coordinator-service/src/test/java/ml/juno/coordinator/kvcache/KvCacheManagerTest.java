package ml.juno.coordinator.kvcache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KvCacheManagerTest {
    private static final int BS = 4;

    private static int[] tokens(int from, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = from + i;
        }
        return t;
    }

    private static int[] concat(int[] a, int[] b) {
        int[] r = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    /** Runs a whole prompt as one chunk and commits it, like a finished prefill. */
    private static BlockTable prefill(KvCacheManager kv, int[] prompt) {
        BlockTable t = new BlockTable();
        int cached = kv.admit(t, prompt, prompt.length, Integer.MAX_VALUE);
        assertTrue(cached >= 0, "admitted");
        kv.commit(t, prompt, prompt.length);
        return t;
    }

    private static void assertBalanced(KvCacheManager kv) {
        var u = kv.stats().blocks();
        assertEquals(u.total(), u.used() + u.cached() + u.free(), "every block in exactly one state: " + u);
    }

    @Test
    void allocateSlots_coversPositionsAndFreeReturnsBlocks() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 8));
        var t = new BlockTable();
        assertTrue(kv.allocateSlots(t, 9));
        assertEquals(3, t.blockCount());
        assertTrue(kv.allocateSlots(t, 12), "still fits in 3 blocks");
        assertEquals(3, t.blockCount());
        assertEquals(3, kv.stats().blocks().used());
        kv.free(t);
        assertEquals(0, t.blockCount());
        assertEquals(new KvCacheStats.BlockUsage(0, 0, 8, 8), kv.stats().blocks());
    }

    @Test
    void allocateSlots_failsWithoutSideEffectsWhenPoolIsShort() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 4));
        var a = new BlockTable();
        assertTrue(kv.allocateSlots(a, 12));
        var b = new BlockTable();
        assertFalse(kv.allocateSlots(b, 8));
        assertEquals(0, b.blockCount());
        assertEquals(1, kv.stats().blocks().free());
    }

    @Test
    void samePromptUnderAnotherLoraAdapter_sharesNoBlocks_butItsOwnAdapterHits() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 16));
        int[] prompt = tokens(100, 10);
        var a = new BlockTable();
        kv.admit(a, prompt, prompt.length, Integer.MAX_VALUE, 2);
        kv.commit(a, prompt, prompt.length, 2);
        kv.free(a);
        var none = new BlockTable();
        assertEquals(0, kv.admit(none, prompt, prompt.length, 100), "no adapter: the adapter's blocks are not ours");
        kv.free(none);
        var other = new BlockTable();
        assertEquals(0, kv.admit(other, prompt, prompt.length, 100, 3), "another adapter: no hit");
        kv.free(other);
        var same = new BlockTable();
        assertEquals(8, kv.admit(same, prompt, prompt.length, 100, 2), "the same adapter: every full block but the last");
        kv.free(same);
        assertBalanced(kv);
    }

    @Test
    void repeatedPrompt_hitsEveryFullBlockButTheOneHoldingTheLastToken() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 16));
        int[] prompt = tokens(100, 10); // blocks [0..4) [4..8) [8..10)
        var a = prefill(kv, prompt);
        kv.free(a);
        assertEquals(2, kv.stats().blocks().cached());

        var b = new BlockTable();
        assertEquals(8, kv.admit(b, prompt, prompt.length, 100));
        var c = kv.stats().prefix();
        assertEquals(8, c.hitTokens());
        assertEquals(2, c.hitBlocks());
        assertEquals(10 + 2, c.missTokens(), "10 tokens computed the first time, 2 the second");

        // a prompt of exactly two blocks may reuse only the first: its last token must be computed
        int[] exact = tokens(100, 8);
        var d = new BlockTable();
        assertEquals(4, kv.admit(d, exact, exact.length, 100));
        assertBalanced(kv);
    }

    @Test
    void forgetPrefixes_freesCachedBlocksAndStopsHitsWithoutTouchingHeldBlocks() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 16));
        int[] prompt = tokens(100, 10);
        kv.free(prefill(kv, prompt));               // 2 cached blocks
        var held = prefill(kv, tokens(300, 9));     // 2 registered blocks still in use
        int used = kv.stats().blocks().used();
        kv.forgetPrefixes();
        assertEquals(0, kv.stats().blocks().cached());
        assertEquals(used, kv.stats().blocks().used(), "blocks a sequence holds stay held");
        assertBalanced(kv);
        var b = new BlockTable();
        assertEquals(0, kv.admit(b, prompt, prompt.length, 100), "no prefix survives");
        kv.free(b);
        kv.free(held);
        assertEquals(0, kv.stats().blocks().cached(), "forgotten blocks are not cached again on release");
        assertEquals(16, kv.stats().blocks().free());
    }

    @Test
    void extendedPrompt_reusesThePreviousPromptsBlocks() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 16));
        int[] first = tokens(0, 9);
        var a = prefill(kv, first);
        kv.free(a);
        int[] longer = concat(first, tokens(500, 7));
        var b = new BlockTable();
        assertEquals(8, kv.admit(b, longer, longer.length, 100));
        assertEquals(4, b.blockCount(), "16 tokens need 4 blocks");
    }

    @Test
    void divergingPrompt_reusesOnlyTheCommonWholeBlocks() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 16));
        int[] first = tokens(0, 12);
        kv.free(prefill(kv, first));
        int[] other = first.clone();
        other[5] = 999; // second block differs
        var b = new BlockTable();
        assertEquals(4, kv.admit(b, other, other.length, 100));
        assertEquals(2 + 1, kv.stats().prefix().missBlocks(), "first run: 2 lookups missed; second run: its second block missed");
        assertEquals(1, kv.stats().prefix().hitBlocks());
    }

    @Test
    void sharedBlocks_countReferencesAndStayUsedUntilLastOwnerFrees() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 16));
        int[] prompt = tokens(7, 9);
        var a = prefill(kv, prompt);
        var b = new BlockTable();
        assertEquals(8, kv.admit(b, prompt, prompt.length, 100));
        int shared0 = a.block(0);
        assertEquals(shared0, b.block(0));
        assertEquals(a.block(1), b.block(1));
        assertEquals(2, kv.refCount(shared0));
        assertTrue(a.block(2) != b.block(2), "the partial last block is private");
        assertEquals(4, kv.stats().blocks().used());

        kv.free(a);
        assertEquals(1, kv.refCount(shared0));
        assertEquals(3, kv.stats().blocks().used());
        assertEquals(0, kv.stats().blocks().cached());
        kv.free(b);
        assertEquals(0, kv.refCount(shared0));
        assertEquals(2, kv.stats().blocks().cached());
        assertBalanced(kv);
    }

    @Test
    void pressure_evictsCachedBlocksOnlyWhenNoneIsFree() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 4));
        int[] prompt = tokens(0, 9); // 3 blocks, 2 registered
        kv.free(prefill(kv, prompt));
        assertEquals(new KvCacheStats.BlockUsage(0, 2, 2, 4), kv.stats().blocks());

        var small = new BlockTable();
        assertTrue(kv.allocateSlots(small, 8));
        assertEquals(0, kv.stats().prefix().evictions(), "free blocks go first");
        var more = new BlockTable();
        assertTrue(kv.allocateSlots(more, 4));
        assertEquals(1, kv.stats().prefix().evictions());
        kv.free(small);
        kv.free(more);

        var again = new BlockTable();
        int cached = kv.admit(again, prompt, prompt.length, 100);
        assertTrue(cached < 8, "an evicted block can no longer be a hit, got " + cached);
        assertBalanced(kv);
    }

    @Test
    void admit_isAllOrNothingWhenBlocksRunShort() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 4));
        int[] prompt = tokens(0, 9);
        var a = prefill(kv, prompt); // 3 used
        var b = new BlockTable();
        int[] longer = concat(prompt, tokens(50, 12)); // needs 2 shared + 4 new
        assertEquals(-1, kv.admit(b, longer, longer.length, 100));
        assertEquals(0, b.blockCount());
        assertEquals(1, kv.refCount(a.block(0)), "shared references rolled back");
        assertEquals(0, kv.stats().prefix().hitTokens(), "a failed admission counts nothing");
        var c = new BlockTable();
        assertEquals(8, kv.admit(c, longer, longer.length, 4), "a smaller first chunk fits");
    }

    @Test
    void forBudget_sizesPoolFromBytesPerToken() {
        var layout = new KvLayout(2, 4, 8, 2); // 2*2*4*8*2 = 256 bytes per token
        assertEquals(256, layout.bytesPerToken());
        var cfg = KvCacheConfig.forBudget(256L * 16 * 10 + 100, layout, 16, true);
        assertEquals(10, cfg.numBlocks());
        assertThrows(IllegalArgumentException.class, () -> KvCacheConfig.forBudget(100, layout, 16, true));
    }

    @Test
    void randomSharingAndFreeing_leavesNothingUsedAndAFullAllocationStillFits() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 64));
        SplittableRandom r = new SplittableRandom(3);
        int[][] prefixes = {tokens(0, 20), tokens(1000, 13), tokens(2000, 6)};
        List<BlockTable> live = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            if (!live.isEmpty() && (r.nextInt(3) == 0 || kv.availableBlocks() < 10)) {
                kv.free(live.remove(r.nextInt(live.size())));
            } else {
                int[] p = prefixes[r.nextInt(prefixes.length)];
                int[] prompt = concat(java.util.Arrays.copyOf(p, 1 + r.nextInt(p.length)), tokens(r.nextInt(5000), r.nextInt(8)));
                var t = new BlockTable();
                if (kv.admit(t, prompt, prompt.length, prompt.length) >= 0) {
                    kv.commit(t, prompt, prompt.length);
                    live.add(t);
                }
            }
            assertBalanced(kv);
        }
        live.forEach(kv::free);
        for (int b = 0; b < 64; b++) {
            assertEquals(0, kv.refCount(b));
        }
        assertEquals(0, kv.stats().blocks().used());
        assertTrue(kv.stats().prefix().hitTokens() > 0, "shared prefixes were hit");
        var all = new BlockTable();
        assertTrue(kv.allocateSlots(all, 64 * BS), "the whole pool can be taken");
        assertEquals(64, all.blockCount());
    }

    @Test
    void eviction_takesTheLeastRecentlyReleasedBlockAndAPrefixTailBeforeItsHead() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 8));
        int[] old = tokens(0, 13);    // 3 full blocks + 1 partial
        int[] recent = tokens(100, 5); // 1 full block + 1 partial
        kv.free(prefill(kv, old));
        kv.free(prefill(kv, recent));
        assertEquals(new KvCacheStats.BlockUsage(0, 4, 4, 8), kv.stats().blocks());

        var big = new BlockTable();
        assertTrue(kv.allocateSlots(big, 5 * BS)); // 4 free + 1 eviction
        kv.free(big);
        var a = new BlockTable();
        assertEquals(8, kv.admit(a, old, old.length, 100), "old prefix lost only its tail block");
        kv.free(a);
        var b = new BlockTable();
        assertEquals(4, kv.admit(b, recent, recent.length, 100), "the recently released prefix is intact");
        kv.free(b);

        // a hit refreshes: 'old' (just reused) now outlives 'recent'
        var c = new BlockTable();
        assertEquals(8, kv.admit(c, old, old.length, 100));
        kv.free(c);
        int free = kv.stats().blocks().free();
        var d = new BlockTable();
        assertTrue(kv.allocateSlots(d, (free + 1) * BS)); // one more eviction
        kv.free(d);
        assertEquals(2, kv.stats().prefix().evictions());
        var e = new BlockTable();
        assertEquals(8, kv.admit(e, old, old.length, 100), "the reused prefix survived");
        kv.free(e);
        var f = new BlockTable();
        assertEquals(0, kv.admit(f, recent, recent.length, 100), "the least recently released one went");
    }

    @Test
    void prefixCachingOff_neverSharesAndReturnsEveryBlockToTheFreeList() {
        var kv = new KvCacheManager(new KvCacheConfig(BS, 16, false));
        int[] prompt = tokens(0, 13);
        kv.free(prefill(kv, prompt));
        assertEquals(new KvCacheStats.BlockUsage(0, 0, 16, 16), kv.stats().blocks());
        var t = new BlockTable();
        assertEquals(0, kv.admit(t, prompt, prompt.length, 100));
        assertEquals(0, kv.stats().prefix().hitTokens());
        assertEquals(26, kv.stats().prefix().missTokens());
    }
}
