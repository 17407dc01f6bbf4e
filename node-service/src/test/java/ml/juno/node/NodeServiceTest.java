package ml.juno.node;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.quarkus.grpc.GrpcClient;
import io.quarkus.test.junit.QuarkusTest;
import java.time.Duration;
import ml.juno.node.v1.NodeService;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.ShardState;
import ml.juno.node.v1.StatusRequest;
import org.junit.jupiter.api.Test;

@QuarkusTest
class NodeServiceTest {

    @GrpcClient("node")
    NodeService node;

    @Test
    void freshNode_isAliveButNotReady() {
        given().when().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
        given().when().get("/q/health/ready").then().statusCode(503)
                .body("checks.find { it.name == 'shard' }.data.state", equalTo("SHARD_STATE_EMPTY"));
    }

    @Test
    void status_reportsEmptyShardAndCpuBackend() {
        NodeStatus s = node.getStatus(StatusRequest.getDefaultInstance()).await().atMost(Duration.ofSeconds(10));
        assertEquals(ShardState.SHARD_STATE_EMPTY, s.getState());
        assertFalse(s.getBackend().isEmpty());
        assertEquals(Runtime.getRuntime().availableProcessors(), s.getComputeThreads());
    }
}
