package ml.juno.model.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.List;
import java.util.function.ToDoubleFunction;
import ml.juno.engine.moe.ExpertStats;
import ml.juno.engine.moe.ExpertStore;

/**
 * Streamed-expert metrics ({@code --expert-cache}) in {@code /q/metrics} of a coordinator (in-process engine) and of a
 * node, read at scrape time from the expert stores open in the process ({@link ExpertStore#openStats}; all 0 when the
 * experts are memory-mapped): hits and misses (their ratio is the hit rate), bytes and reads from the file, tokens,
 * reads in flight, the inference thread's read wait and expert compute time, distinct experts per window, and health
 * (0 after a read failure or a changed file). Each service produces one as a {@link MeterBinder} bean.
 */
public final class ExpertMeters implements MeterBinder {

    @Override
    public void bindTo(MeterRegistry registry) {
        counter(registry, "juno.experts.hits", "Routed-expert uses served from the RAM cache", ExpertStats::hits);
        counter(registry, "juno.experts.misses", "Routed experts read from the model file", ExpertStats::misses);
        counter(registry, "juno.experts.read.bytes", "Bytes of experts read from the model file", s -> s.traffic().bytesRead());
        counter(registry, "juno.experts.reads", "Positional reads of expert bytes", s -> s.traffic().reads());
        counter(registry, "juno.experts.prefetched", "Experts read a layer ahead (juno.experts.prefetch)", s -> s.traffic().prefetched());
        counter(registry, "juno.experts.prefetch.used", "Experts read ahead that the next layer used", s -> s.traffic().prefetchUsed());
        counter(registry, "juno.experts.tokens", "Tokens (rows) that ran through streamed MoE layers", s -> s.traffic().tokens());
        counter(registry, "juno.experts.read.wait.seconds", "Time the inference thread waited for expert reads",
                s -> s.timing().readWaitNanos() / 1e9);
        counter(registry, "juno.experts.compute.seconds", "Time spent computing streamed experts", s -> s.timing().computeNanos() / 1e9);
        gauge(registry, "juno.experts.hit.rate", "Share of routed-expert uses served from the RAM cache", all -> {
            long h = 0;
            long m = 0;
            for (ExpertStats s : all) {
                h += s.hits();
                m += s.misses();
            }
            return h + m == 0 ? 0 : (double) h / (h + m);
        });
        gauge(registry, "juno.experts.reads.in.flight", "Expert reads queued or running now",
                all -> all.stream().mapToDouble(s -> s.timing().readsInFlight()).sum());
        gauge(registry, "juno.experts.cache.bytes", "Budget of the expert RAM cache",
                all -> all.stream().mapToDouble(s -> s.tier().budgetBytes()).sum());
        gauge(registry, "juno.experts.unique.per.window", "Distinct experts a layer used per window of tokens (mean)",
                all -> all.stream().mapToDouble(s -> s.traffic().uniqueExpertsPerWindow()).average().orElse(0));
        gauge(registry, "juno.experts.healthy", "1 while expert streaming is healthy (or off), 0 after a failure",
                all -> all.stream().allMatch(ExpertStats::healthy) ? 1 : 0);
    }

    private static void counter(MeterRegistry registry, String name, String description, ToDoubleFunction<ExpertStats> read) {
        FunctionCounter.builder(name, ExpertStore.class,
                        c -> ExpertStore.openStats().stream().mapToDouble(read).sum())
                .description(description).register(registry);
    }

    private static void gauge(MeterRegistry registry, String name, String description, ToDoubleFunction<List<ExpertStats>> read) {
        Gauge.builder(name, ExpertStore.class, c -> read.applyAsDouble(ExpertStore.openStats()))
                .description(description).register(registry);
    }
}
