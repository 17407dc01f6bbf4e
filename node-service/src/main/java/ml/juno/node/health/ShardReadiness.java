package ml.juno.node.health;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import ml.juno.model.shard.ShardSummary;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.runtime.ShardHolder;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready only while a shard is loaded: a fresh node is alive but not ready. With a shard, the data say its backend and
 * isa. A shard whose streamed experts failed (a read error, the model file changed: {@code --expert-cache}) is not
 * ready either, and the data say why.
 */
@Readiness
@ApplicationScoped
public class ShardReadiness implements HealthCheck {

    @Inject
    ShardHolder shard;

    @Override
    public HealthCheckResponse call() {
        ShardHolder.State s = shard.state();
        String experts = null;
        for (var st : ml.juno.engine.moe.ExpertStore.openStats()) {
            if (!st.healthy()) {
                experts = st.failure();
            }
        }
        HealthCheckResponseBuilder b = HealthCheckResponse.named("shard")
                .status(shard.ready() && experts == null)
                .withData("state", ProtoMapping.toProto(s.phase()).name())
                .withData("message", s.message());
        ShardSummary info = shard.ready() ? shard.info() : null;
        if (info != null) { // which kernels compute the loaded shard
            b.withData("backend", info.backend()).withData("isa", info.isa());
        }
        if (experts != null) {
            b.withData("experts", experts);
        }
        return b.build();
    }
}
