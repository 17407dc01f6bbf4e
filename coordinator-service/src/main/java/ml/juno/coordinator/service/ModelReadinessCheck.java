package ml.juno.coordinator.service;

import jakarta.enterprise.context.ApplicationScoped;
import ml.juno.coordinator.engine.BackendInfo;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * {@code /q/health/ready}: UP once the model is loaded and the engine runs (data: model, context, backend, isa); DOWN
 * says why not, also when the in-process engine's streamed experts failed ({@code --expert-cache}: a read error or the
 * model file changed; every step then fails with that message).
 */
@Readiness
@ApplicationScoped
public class ModelReadinessCheck implements HealthCheck {

    private final EngineProducer engines;

    ModelReadinessCheck(EngineProducer engines) {
        this.engines = engines;
    }

    @Override
    public HealthCheckResponse call() {
        var builder = HealthCheckResponse.named("model");
        return engines.current()
                .map(m -> {
                    BackendInfo backend = m.engine().backend(); // in process, or the nodes'
                    for (var st : ml.juno.engine.moe.ExpertStore.openStats()) {
                        if (!st.healthy()) {
                            return builder.down().withData("model", m.id()).withData("experts", st.failure()).build();
                        }
                    }
                    return builder.up().withData("model", m.id()).withData("context_length", m.engine().info().contextLength())
                            .withData("backend", backend.kind()).withData("isa", backend.isa()).build();
                })
                .orElseGet(() -> builder.down().withData("state", engines.state()).build());
    }
}
