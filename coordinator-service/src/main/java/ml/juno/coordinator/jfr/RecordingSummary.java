package ml.juno.coordinator.jfr;

import java.util.List;

/**
 * What {@code juno metrics} reports for one or more JFR recordings (one per JVM of a run).
 *
 * @param files                the recordings read
 * @param requests             sequences that produced a first token
 * @param tokens               generated tokens delivered ({@code juno.TokenProduced})
 * @param busySeconds          total duration of the generation loop's steps
 * @param spanSeconds          from the first step's start to the last token
 * @param tokensPerSecond      {@code tokens / busySeconds}: generation speed while the loop had work
 * @param wallTokensPerSecond  {@code tokens / spanSeconds}: including idle gaps between requests
 * @param timeToFirstToken     submission → first token, per request
 * @param stepLatency          one generation-loop step ({@code juno.SchedulerStep})
 * @param steps                what the steps computed
 * @param forwardPasses        forward steps per shard ({@code juno.ForwardPass}), one entry per shard seen
 * @param kvCache              prefix-cache totals over admissions ({@code juno.KvCache})
 * @param tokenizer            text encodings ({@code juno.Tokenizer})
 * @param templates            chat-template renderings ({@code juno.TemplateFormat})
 * @param matMul               matrix products ({@code juno.MatMul}; empty unless recorded)
 */
public record RecordingSummary(List<String> files, long requests, long tokens, double busySeconds, double spanSeconds,
                               double tokensPerSecond, double wallTokensPerSecond, Latency timeToFirstToken,
                               Latency stepLatency, Steps steps, List<ShardPasses> forwardPasses, KvTotals kvCache,
                               Latency tokenizer, Latency templates, Latency matMul) {

    /**
     * @param prefillTokens prompt tokens computed
     * @param decodeTokens  decode rows computed
     * @param meanBatchRows average sequences per step
     */
    public record Steps(long count, long prefillTokens, long decodeTokens, double meanBatchRows) {
    }

    /** Forward passes of one shard: layers {@code [firstLayer, endLayer)}, tensor slice {@code tensorRank/tensorParts}. */
    public record ShardPasses(int firstLayer, int endLayer, int tensorRank, int tensorParts, long rows, Latency latency) {
    }

    public record KvTotals(long admissions, long hitTokens, long missTokens, long evictions) {
        /** Share of admitted prompt tokens served from the cache. */
        public double hitRate() {
            long all = hitTokens + missTokens;
            return all == 0 ? 0 : (double) hitTokens / all;
        }
    }
}
