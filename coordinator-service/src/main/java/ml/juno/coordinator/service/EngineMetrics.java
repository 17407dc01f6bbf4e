package ml.juno.coordinator.service;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import ml.juno.coordinator.engine.EngineStats;
import ml.juno.coordinator.engine.RequestMetrics;
import ml.juno.coordinator.sampling.FinishReason;

/**
 * Juno's Prometheus metrics ({@code /q/metrics}): requests by endpoint and finish reason, prompt and generated
 * tokens, time to first token, inter-token latency, and gauges that read {@link EngineStats} at scrape time
 * (queue depth, batch size, KV blocks, prefix-cache hit rate). Meters are created once; recording a token
 * allocates nothing.
 */
@Startup
@ApplicationScoped
public class EngineMetrics {

    private final MeterRegistry registry;
    private final EngineProducer engines;
    private final Timer ttft;
    private final Timer itl;
    private final Map<RequestKind, Map<FinishReason, Counter>> finished = new EnumMap<>(RequestKind.class);
    private final Map<RequestKind, Counter> started = new EnumMap<>(RequestKind.class);
    private final Map<RequestKind, Counter> rejected = new EnumMap<>(RequestKind.class);

    EngineMetrics(MeterRegistry registry, EngineProducer engines) {
        this.registry = registry;
        this.engines = engines;
        this.ttft = Timer.builder("juno.time.to.first.token")
                .description("From submission to the first generated token of a choice")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry);
        this.itl = Timer.builder("juno.inter.token.latency")
                .description("Between two generated tokens of a choice")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        for (RequestKind kind : RequestKind.values()) {
            Map<FinishReason, Counter> byReason = new EnumMap<>(FinishReason.class);
            for (FinishReason reason : FinishReason.values()) {
                byReason.put(reason, Counter.builder("juno.requests.finished").description("Choices finished, by endpoint and finish reason")
                        .tag("endpoint", kind.tag()).tag("finish_reason", reason.wireName()).register(registry));
            }
            finished.put(kind, byReason);
            started.put(kind, Counter.builder("juno.requests").description("Generation requests accepted for templating and tokenizing")
                    .tag("endpoint", kind.tag()).register(registry));
            rejected.put(kind, Counter.builder("juno.requests.rejected").description("Requests refused because the queue was full")
                    .tag("endpoint", kind.tag()).register(registry));
        }
        gauge("juno.queue.depth", "Requests waiting for the scheduler", EngineStats::queued);
        gauge("juno.batch.size", "Sequences in the running batch", EngineStats::running);
        gauge("juno.kv.blocks.used", "KV-cache blocks in use", EngineStats::kvBlocksUsed);
        gauge("juno.kv.blocks.total", "KV-cache blocks in all", EngineStats::kvBlocksTotal);
        gauge("juno.prefix.cache.hit.rate", "Prompt tokens served from the prefix cache, as a share of all prompt tokens looked up",
                s -> s.prefixHitTokens() + s.prefixMissTokens() == 0 ? 0 : (double) s.prefixHitTokens() / (s.prefixHitTokens() + s.prefixMissTokens()));
        Gauge.builder("juno.model.ready", engines, e -> e.current().isPresent() ? 1 : 0)
                .description("1 when the model is loaded and the engine runs").register(registry);
        counter("juno.tokens.prompt", "Prompt tokens the engine processed (tokens in)", EngineStats::promptTokens);
        counter("juno.tokens.generated", "Tokens the engine generated (tokens out)", EngineStats::generatedTokens);
        counter("juno.engine.steps", "Forward steps the engine ran", EngineStats::steps);
    }

    private void gauge(String name, String description, ToDoubleFunction<EngineStats> read) {
        Gauge.builder(name, engines, e -> e.current().map(m -> read.applyAsDouble(m.engine().stats())).orElse(0d))
                .description(description).register(registry);
    }

    private void counter(String name, String description, ToDoubleFunction<EngineStats> read) {
        FunctionCounter.builder(name, engines, e -> e.current().map(m -> read.applyAsDouble(m.engine().stats())).orElse(0d))
                .description(description).register(registry);
    }

    void started(RequestKind kind) {
        started.get(kind).increment();
    }

    void rejected(RequestKind kind) {
        rejected.get(kind).increment();
    }

    /** What one request of {@code kind} records while its output runs. */
    RequestMetrics forKind(RequestKind kind) {
        Map<FinishReason, Counter> byReason = finished.get(kind);
        return new RequestMetrics() {
            @Override
            public void timeToFirstToken(long nanos) {
                ttft.record(nanos, TimeUnit.NANOSECONDS);
            }

            @Override
            public void interTokenLatency(long nanos) {
                itl.record(nanos, TimeUnit.NANOSECONDS);
            }

            @Override
            public void choiceFinished(FinishReason reason) {
                byReason.get(reason).increment();
            }
        };
    }
}
