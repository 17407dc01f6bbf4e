package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.NodeProcesses;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code juno coordinator} (the CLI, running the packaged coordinator) over two node processes, pipeline parallel.
 * Killing a node during a stream gives the client an error within the step deadline; after the node is started
 * again on its port, the coordinator reloads its shard and a new request gets the same answer as before.
 */
class ClusterFailoverIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
    static final Path MODEL = Path.of(System.getProperty("juno.models.dir", ROOT.resolve("models").toString()),
            "testdata/tiny-random/tiny-llama-random-F16.gguf").toAbsolutePath();
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final ObjectMapper JSON = new ObjectMapper();

    static NodeProcesses nodes;
    static AppLauncher coordinator;

    @BeforeAll
    static void start() throws Exception {
        nodes = NodeProcesses.start("failover-node", 2);
        Path app = Path.of(System.getProperty("juno.coordinator.app", ROOT.resolve("coordinator-service/target/quarkus-app").toString()));
        int port = AppLauncher.freePort();
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules=jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED", "-Xmx128m",
                "-Djuno.home=" + ROOT, "-cp", app.resolve("app") + "/*:" + app.resolve("lib/main") + "/*", "ml.juno.cli.Juno",
                "coordinator", "--model-path", MODEL.toString(), "--nodes", String.join(",", nodes.addresses(2)),
                "--api-port", Integer.toString(port), "--host", "127.0.0.1", "--step-timeout", "5s", "--threads-per-node", "1");
        coordinator = AppLauncher.startCommand("juno-coordinator", port, cmd, Duration.ofSeconds(60));
        LocalServer.awaitReady(coordinator, Duration.ofSeconds(60));
    }

    @AfterAll
    static void stop() {
        if (coordinator != null) {
            coordinator.close();
        }
        if (nodes != null) {
            nodes.close();
        }
    }

    static HttpRequest completion(int maxTokens, boolean stream) {
        String body = "{\"model\":\"tiny-llama-random-F16\",\"prompt\":\"Once upon a time\",\"max_tokens\":" + maxTokens
                + ",\"temperature\":0,\"stream\":" + stream + "}";
        return HttpRequest.newBuilder(coordinator.url("/v1/completions")).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    static String text(HttpResponse<String> r) throws Exception {
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body()).get("choices").get(0).get("text").asText();
    }

    @Test
    void aStrangersLoadShard_forAPathOutsideTheModelsDir_leavesALiveStreamAlone() throws Exception {
        LocalServer.awaitReady(coordinator, Duration.ofSeconds(30));
        HttpResponse<InputStream> stream = HTTP.send(completion(200, true), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, stream.statusCode());
        List<String> events = new ArrayList<>();
        List<String> refusals = new ArrayList<>();
        io.grpc.ManagedChannel channel = io.grpc.ManagedChannelBuilder.forAddress("127.0.0.1", nodes.get(0).port()).usePlaintext().build();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            var stub = ml.juno.node.v1.NodeServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, java.util.concurrent.TimeUnit.SECONDS);
            for (String line; (line = in.readLine()) != null; ) {
                if (!line.startsWith("data:")) {
                    continue;
                }
                events.add(line);
                if (events.size() == 3) {
                    for (String path : List.of("/etc/passwd", "../../../../../../etc/passwd", "/no/such.gguf")) {
                        try {
                            stub.loadShard(ml.juno.node.v1.LoadShardRequest.newBuilder().setModelPath(path)
                                    .setPipeline(ml.juno.node.v1.PipelineShard.newBuilder().setFirstLayer(0).setEndLayer(1)).build());
                            refusals.add("accepted " + path);
                        } catch (io.grpc.StatusRuntimeException e) {
                            refusals.add(e.getStatus().getDescription());
                        }
                    }
                }
            }
        } finally {
            channel.shutdownNow();
        }
        assertEquals(3, refusals.size());
        for (String r : refusals) {
            assertTrue(r.endsWith("is not a readable model file inside this node's models directory"), r);
        }
        assertFalse(events.stream().anyMatch(e -> e.contains("\"error\"")), "the stream was disturbed: " + events.subList(Math.max(0, events.size() - 3), events.size()));
        assertTrue(events.get(events.size() - 1).contains("[DONE]"), events.get(events.size() - 1));
        assertTrue(events.stream().anyMatch(e -> e.contains("\"finish_reason\":\"length\"")), "ran to its length");
    }

    @Test
    void killedNodeMidStream_failsTheStreamWithinTheDeadline_andTheClusterServesAgainAfterRestart() throws Exception {
        String before = text(HTTP.send(completion(16, false), HttpResponse.BodyHandlers.ofString()));
        assertFalse(before.isEmpty());

        HttpResponse<InputStream> stream = HTTP.send(completion(480, true), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, stream.statusCode());
        List<String> events = new ArrayList<>();
        long killedAt = 0;
        int killedPort = nodes.get(1).port();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (!line.startsWith("data:")) {
                    continue;
                }
                events.add(line);
                if (events.size() == 3) {
                    nodes.get(1).process().destroyForcibly(); // SIGKILL: no goodbye on the stream
                    killedAt = System.nanoTime();
                }
            }
        }
        long afterKillMs = (System.nanoTime() - killedAt) / 1_000_000;
        assertTrue(killedAt != 0, "the stream ended before the node was killed: " + events);
        assertTrue(afterKillMs < 6000, "the stream ended " + afterKillMs + " ms after the kill; the step deadline is 5 s");
        assertTrue(events.stream().anyMatch(e -> e.contains("\"error\"")), "no error event in " + events.subList(Math.max(0, events.size() - 3), events.size()));
        assertTrue(events.size() < 480, "the stream did not stop at the failure");

        JsonNode degraded = health();
        assertEquals("DOWN", degraded.get("status").asText(), degraded.toString());
        assertEquals("DOWN", degraded.get("nodes").get(1).get("state").asText(), "the killed node: " + degraded);
        assertEquals("UP", degraded.get("nodes").get(0).get("state").asText(), degraded.toString());
        AppLauncher restarted = AppLauncher.start("failover-node-1-restarted", AppLauncher.nodeApp(), Map.of("juno.node.id", "failover-node-1"),
                Duration.ofSeconds(90), killedPort);
        try {
            LocalServer.awaitReady(coordinator, Duration.ofSeconds(30)); // the coordinator reloaded the node's shard
            assertEquals(before, text(HTTP.send(completion(16, false), HttpResponse.BodyHandlers.ofString())));
            assertEquals("UP", health().get("status").asText());
        } finally {
            restarted.close();
        }
    }

    /** {@code GET /v1/cluster/health}, the old native API's view of the cluster. */
    static JsonNode health() throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(coordinator.url("/v1/cluster/health")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        JsonNode h = JSON.readTree(r.body());
        assertEquals(h.get("status").asText().equals("UP") ? 200 : 503, r.statusCode(), r.body());
        return h;
    }

    @Test
    void clusterHealth_showsEveryNodeWithItsShard_andTheWire() throws Exception {
        LocalServer.awaitReady(coordinator, Duration.ofSeconds(30));
        JsonNode h = health();
        assertEquals("UP", h.get("status").asText(), h.toString());
        assertEquals("pipeline", h.get("mode").asText());
        assertEquals("FLOAT16", h.get("dtype").asText(), "FLOAT16 activations by default");
        assertEquals("LITTLE_ENDIAN", h.get("byteOrder").asText());
        JsonNode n = h.get("nodes");
        assertEquals(2, n.size(), h.toString());
        assertEquals(0, n.get(0).get("layers").get(0).asInt());
        assertEquals(n.get(0).get("layers").get(1).asInt(), n.get(1).get("layers").get(0).asInt(), "the shards meet");
        for (JsonNode node : n) {
            assertEquals("UP", node.get("state").asText(), node.toString());
            assertTrue(node.get("address").asText().startsWith("127.0.0.1:"), node.toString());
        }
    }
}
