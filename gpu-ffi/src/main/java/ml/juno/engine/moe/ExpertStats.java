package ml.juno.engine.moe;

import java.util.List;

/**
 * What an {@link ExpertStore} has done since it opened: its tier, its traffic, where the time went, per-layer hits, and
 * its health ({@code failure} is {@code null} while healthy; after a read failed or the file changed, every step
 * fails with it).
 */
public record ExpertStats(Tier tier, Traffic traffic, Timing timing, List<LayerHits> layers, String failure) {

    public ExpertStats {
        layers = List.copyOf(layers);
    }

    /**
     * The RAM tier: the budget, the size of a slot (one expert, aligned), cache slots (budget / slot), staging slots
     * (the misses in flight beyond the cache, outside the budget), whether reads bypass the page cache, and the bytes
     * read at open to fill a cache that holds every expert and the nanoseconds that took (0 without; not in
     * {@link Traffic}).
     */
    public record Tier(long budgetBytes, long slotBytes, int cacheSlots, int stagingSlots, boolean direct,
                       long preloadBytes, long preloadNanos) {}

    /**
     * Tokens (rows) and steps run, reads issued and bytes read from the file, and the distinct experts a layer used
     * per window of {@value ExpertStore#WINDOW} tokens (mean over layers and windows; 0 before the first window ends);
     * experts read ahead (a layer early, prefetching on) and how many of them the layer then used (counted as hits).
     */
    public record Traffic(long tokens, long steps, long reads, long bytesRead, double uniqueExpertsPerWindow,
                          long prefetched, long prefetchUsed) {}

    /**
     * Nanoseconds the inference thread waited for reads, and spent computing experts; wall time with at least one
     * read in flight ({@code bytesRead / readBusyNanos} is the achieved read bandwidth); reads in flight now and at most.
     */
    public record Timing(long readWaitNanos, long computeNanos, long readBusyNanos, int readsInFlight, int maxReadsInFlight) {}

    /** One MoE layer ({@code layer}: model layer index): experts found in the RAM tier and experts read. */
    public record LayerHits(int layer, long hits, long misses) {
        public double hitRate() {
            long all = hits + misses;
            return all == 0 ? 0 : (double) hits / all;
        }
    }

    public long hits() {
        return layers.stream().mapToLong(LayerHits::hits).sum();
    }

    public long misses() {
        return layers.stream().mapToLong(LayerHits::misses).sum();
    }

    /** Share of expert uses served from RAM. */
    public double hitRate() {
        long all = hits() + misses();
        return all == 0 ? 0 : (double) hits() / all;
    }

    public double bytesPerToken() {
        return traffic.tokens() == 0 ? 0 : (double) traffic.bytesRead() / traffic.tokens();
    }

    public boolean healthy() {
        return failure == null;
    }
}
