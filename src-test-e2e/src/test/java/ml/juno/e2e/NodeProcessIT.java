package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.node.v1.NodeServiceGrpc;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.ShardState;
import ml.juno.node.v1.StatusRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The packaged node app runs as its own process, answers health over HTTP and status over gRPC on one port. */
class NodeProcessIT {

    static AppLauncher node;
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void startNode() throws Exception {
        node = AppLauncher.start("node", AppLauncher.nodeApp(), Map.of("juno.node.id", "e2e-node"), Duration.ofSeconds(60));
    }

    @AfterAll
    static void stopNode() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void packagedNode_isLiveButNotReadyUntilAShardIsLoaded() throws Exception {
        HttpResponse<String> live = HTTP.send(HttpRequest.newBuilder(node.url("/q/health/live")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, live.statusCode());
        assertEquals("UP", JSON.readTree(live.body()).get("status").asText());

        HttpResponse<String> ready = HTTP.send(HttpRequest.newBuilder(node.url("/q/health/ready")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(503, ready.statusCode());
        JsonNode shard = null;
        for (JsonNode check : JSON.readTree(ready.body()).get("checks")) {
            if ("shard".equals(check.get("name").asText())) {
                shard = check;
            }
        }
        assertEquals("DOWN", shard.get("status").asText(), ready.body());
        assertEquals("SHARD_STATE_EMPTY", shard.get("data").get("state").asText());
    }

    @Test
    void packagedNode_answersStatusOverRealGrpc() throws Exception {
        ManagedChannel channel = ManagedChannelBuilder.forAddress("127.0.0.1", node.port()).usePlaintext().build();
        try {
            NodeStatus status = NodeServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                    .getStatus(StatusRequest.getDefaultInstance());
            assertEquals("e2e-node", status.getNodeId());
            assertEquals(ShardState.SHARD_STATE_EMPTY, status.getState());
            // native kernels where the build had a compiler, else the Java ones
            assertTrue(status.getBackend().startsWith("cpu-native-") || status.getBackend().startsWith("cpu-vector-"),
                    status.getBackend());
            assertTrue(node.process().isAlive());
        } finally {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
