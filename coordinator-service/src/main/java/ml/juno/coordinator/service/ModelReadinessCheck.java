package ml.juno.coordinator.service;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** {@code /q/health/ready}: UP once the model is loaded and the engine runs; DOWN says why not. */
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
                .map(m -> builder.up().withData("model", m.id()).withData("context_length", m.engine().info().contextLength()).build())
                .orElseGet(() -> builder.down().withData("state", engines.state()).build());
    }
}
