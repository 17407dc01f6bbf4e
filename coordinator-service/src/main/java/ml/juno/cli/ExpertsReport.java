package ml.juno.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;
import ml.juno.engine.moe.ExpertStats;

/**
 * What streamed experts did during one bench phase (pp or tg, warm-up included unless {@code --cold}): the difference
 * of two {@link ExpertStats} snapshots.
 *
 * @param hitRate          expert uses served from the RAM cache
 * @param bytesPerToken    bytes read from the file per token
 * @param readMiBps        bytes read per second of reading (wall time with a read in flight): the achieved bandwidth
 * @param readWaitMs       per token, the inference thread's wait for reads
 * @param computeMs        per token, expert compute
 */
record ExpertsReport(double hitRate, double bytesPerToken, double readMiBps, double readWaitMs, double computeMs,
                     Extra extra) {

    /**
     * Reads in flight at most, distinct experts per layer per window of tokens, reads issued, experts read ahead
     * (prefetching on) and how many of those the next layer used.
     */
    record Extra(int maxReadsInFlight, double uniquePerWindow, long reads, long prefetched, long prefetchUsed) {}

    /** The phase between {@code before} ({@code null}: the start) and {@code after}. */
    static ExpertsReport of(ExpertStats before, ExpertStats after) {
        long hits = after.hits() - (before == null ? 0 : before.hits());
        long misses = after.misses() - (before == null ? 0 : before.misses());
        long bytes = after.traffic().bytesRead() - (before == null ? 0 : before.traffic().bytesRead());
        long tokens = after.traffic().tokens() - (before == null ? 0 : before.traffic().tokens());
        long reads = after.traffic().reads() - (before == null ? 0 : before.traffic().reads());
        long wait = after.timing().readWaitNanos() - (before == null ? 0 : before.timing().readWaitNanos());
        long compute = after.timing().computeNanos() - (before == null ? 0 : before.timing().computeNanos());
        double seconds = (after.timing().readBusyNanos() - (before == null ? 0 : before.timing().readBusyNanos())) / 1e9;
        return new ExpertsReport(hits + misses == 0 ? 0 : (double) hits / (hits + misses),
                tokens == 0 ? 0 : (double) bytes / tokens, seconds == 0 ? 0 : bytes / seconds / 1048576.0,
                tokens == 0 ? 0 : wait / 1e6 / tokens, tokens == 0 ? 0 : compute / 1e6 / tokens,
                new Extra(after.timing().maxReadsInFlight(), after.traffic().uniqueExpertsPerWindow(), reads,
                        after.traffic().prefetched() - (before == null ? 0 : before.traffic().prefetched()),
                        after.traffic().prefetchUsed() - (before == null ? 0 : before.traffic().prefetchUsed())));
    }

    String text(String phase) {
        return String.format(Locale.ROOT, "%s: hit rate %.1f%%, %.2f MiB read per token (%.0f MiB/s while reading), %d reads, up to %d in "
                        + "flight; per token %.2f ms waiting for reads, %.2f ms computing experts; %.1f distinct experts per "
                        + "layer per %d tokens%s", phase, 100 * hitRate, bytesPerToken / 1048576.0, readMiBps, extra.reads(),
                extra.maxReadsInFlight(), readWaitMs, computeMs, extra.uniquePerWindow(), ml.juno.engine.moe.ExpertStore.WINDOW,
                extra.prefetched() == 0 ? "" : String.format(Locale.ROOT, "; %d experts read ahead, %d of them used",
                        extra.prefetched(), extra.prefetchUsed()));
    }

    static void json(ObjectNode o, ExpertsReport r) {
        o.put("hit_rate", r.hitRate());
        o.put("bytes_per_token", r.bytesPerToken());
        o.put("read_mib_per_s", r.readMiBps());
        o.put("read_wait_ms_per_token", r.readWaitMs());
        o.put("compute_ms_per_token", r.computeMs());
        o.put("reads", r.extra().reads());
        o.put("max_reads_in_flight", r.extra().maxReadsInFlight());
        o.put("unique_experts_per_window", r.extra().uniquePerWindow());
        o.put("prefetched", r.extra().prefetched());
        o.put("prefetch_used", r.extra().prefetchUsed());
    }
}
