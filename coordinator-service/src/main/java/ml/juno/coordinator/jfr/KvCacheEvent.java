package ml.juno.coordinator.jfr;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * The prefix cache's answer for one admitted sequence (an instant event): prompt tokens found in cached blocks
 * (hits) and to compute (misses), cached blocks evicted to make room, and the pool's block usage afterwards.
 */
@Name(KvCacheEvent.NAME)
@Label("KV Cache Admission")
@Category({"Juno", "Coordinator"})
@Description("Prefix-cache hits, misses and evictions when a sequence is admitted")
@StackTrace(false)
public final class KvCacheEvent extends Event {
    public static final String NAME = "juno.KvCache";
    private static final KvCacheEvent PROBE = new KvCacheEvent();

    @Label("Hit Tokens")
    int hitTokens;

    @Label("Miss Tokens")
    int missTokens;

    @Label("Evictions")
    @Description("Cached blocks reclaimed for this admission")
    long evictions;

    @Label("Used Blocks")
    int usedBlocks;

    @Label("Cached Blocks")
    int cachedBlocks;

    @Label("Free Blocks")
    int freeBlocks;

    public static boolean enabled() {
        return PROBE.isEnabled();
    }

    /** Commits one admission; call only when {@link #enabled()}. */
    public static void emit(int hitTokens, int missTokens, long evictions, int used, int cached, int free) {
        KvCacheEvent e = new KvCacheEvent();
        if (e.shouldCommit()) {
            e.hitTokens = hitTokens;
            e.missTokens = missTokens;
            e.evictions = evictions;
            e.usedBlocks = used;
            e.cachedBlocks = cached;
            e.freeBlocks = free;
            e.commit();
        }
    }
}
