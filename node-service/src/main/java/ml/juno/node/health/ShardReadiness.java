package ml.juno.node.health;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import ml.juno.node.runtime.ShardHolder;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Ready only while a shard is loaded: a fresh node is alive but not ready. */
@Readiness
@ApplicationScoped
public class ShardReadiness implements HealthCheck {

    @Inject
    ShardHolder shard;

    @Override
    public HealthCheckResponse call() {
        ShardHolder.State s = shard.state();
        return HealthCheckResponse.named("shard")
                .status(shard.ready())
                .withData("state", s.state().name())
                .withData("message", s.message())
                .build();
    }
}
