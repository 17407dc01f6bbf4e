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
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import ml.juno.coordinator.cluster.ClusterConfig;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.NodeAddress;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.Greedy;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.TestHosts;
import ml.juno.engine.kv.KvType;
import ml.juno.model.wire.ActivationDtype;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Two nodes on hosts of their own: each node process in its own network namespace with an address of its own
 * (10.77.0.10 and .11, both on port 19092, behind a bridge in the root namespace, where the coordinator runs), or on
 * loopback where this machine cannot make namespaces ({@link TestHosts} logs why). Pipeline and tensor parallel over
 * them give the local engine's greedy and seeded tokens; when a node's link goes down mid-stream the stream ends with
 * an error within seconds, the cluster reports that node DOWN and refuses new work at once, and once the link is back
 * the coordinator reloads the node and answers as before.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MultiHostIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", ROOT.resolve("models").toString())).toAbsolutePath();
    static final Path STORIES = MODELS.resolve("stories260K.gguf");
    static final String PROMPT = "Once upon a time";
    static final int TOKENS = 16;
    static final int NODE_PORT = 19092;
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final ObjectMapper JSON = new ObjectMapper();

    static TestHosts hosts;
    static List<AppLauncher> nodes = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        hosts = TestHosts.create(2);
        List<CompletableFuture<AppLauncher>> starting = new ArrayList<>();
        for (int i = 0; i < hosts.count(); i++) {
            int host = i;
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return startNode(host);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }));
        }
        for (CompletableFuture<AppLauncher> f : starting) {
            nodes.add(f.join());
        }
    }

    static AppLauncher startNode(int host) throws Exception {
        String address = hosts.address(host);
        int port = hosts.port(host, NODE_PORT);
        List<String> java = AppLauncher.javaCommand(AppLauncher.nodeApp(), address, port, Map.of("juno.node.id", "host-" + host));
        return AppLauncher.startCommand("multihost-node-" + host, address, port, hosts.on(host, java), Duration.ofSeconds(90));
    }

    @AfterAll
    static void stop() {
        for (AppLauncher n : nodes) {
            n.close();
        }
        if (hosts != null) {
            hosts.close();
        }
    }

    static List<String> addresses() {
        return nodes.stream().map(n -> n.host() + ":" + n.port()).toList();
    }

    static EngineConfig engineConfig() {
        return EngineConfig.defaults(STORIES).withContextLength(128).withKvType(KvType.F32).withMaxSequences(2).withThreads(1);
    }

    /** Greedy tokens, then seeded ones (temperature 0.8, top-k/top-p/min-p, seed 42). */
    static List<List<Integer>> generate(InferenceEngine e) throws Exception {
        return List.of(Greedy.tokens(e, PROMPT, TOKENS), Greedy.sampled(e, PROMPT, TOKENS, SamplingParams.defaults(42)));
    }

    @Test
    @Order(1)
    void pipelineAndTensorParallel_overTwoHosts_giveTheLocalGreedyAndSeededTokens() throws Exception {
        List<List<Integer>> local;
        try (InferenceEngine e = EngineAssembly.open(engineConfig())) {
            local = generate(e);
        }
        assertFalse(local.get(0).equals(local.get(1)), "the seeded run samples (differs from greedy)");
        List<NodeAddress> addresses = addresses().stream().map(NodeAddress::parse).toList();
        if (hosts.namespaces()) {
            assertTrue(addresses.stream().allMatch(a -> a.toString().startsWith("10.77.0.")), "nodes on their own addresses: " + addresses);
        }
        for (Parallelism p : Parallelism.values()) {
            ClusterConfig cc = new ClusterConfig(addresses, p, new ClusterConfig.Wire(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                    new ClusterConfig.Deadlines(Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(30)), 1);
            try (InferenceEngine e = EngineAssembly.open(engineConfig(), ClusterExecutor.factory(cc, engineConfig()))) {
                assertEquals(local, generate(e), p + " over 2 hosts " + (hosts.namespaces() ? "(network namespaces)" : "(loopback)"));
            }
        }
    }

    static HttpRequest completion(AppLauncher coordinator, int maxTokens, boolean stream) {
        String body = "{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":" + maxTokens
                + ",\"temperature\":0,\"stream\":" + stream + "}";
        return HttpRequest.newBuilder(coordinator.url("/v1/completions")).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    static JsonNode clusterHealth(AppLauncher coordinator) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(coordinator.url("/v1/cluster/health")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body());
    }

    @Test
    @Order(2)
    void aLinkGoingDown_failsTheStreamWithinSeconds_reportsTheNodeDown_andTheClusterRecoversWhenItIsBack() throws Exception {
        int port = AppLauncher.freePort();
        List<String> cmd = LivenessIT.cli("coordinator", "--model-path", STORIES.toString(), "--nodes", String.join(",", addresses()),
                "--api-port", Integer.toString(port), "--host", "127.0.0.1", "--step-timeout", "5s", "--threads-per-node", "1");
        try (AppLauncher coordinator = AppLauncher.startCommand("multihost-coordinator", port, cmd, Duration.ofSeconds(60))) {
            LocalServer.awaitReady(coordinator, Duration.ofSeconds(60));
            HttpResponse<String> first = HTTP.send(completion(coordinator, 12, false), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, first.statusCode(), first.body());
            String before = JSON.readTree(first.body()).get("choices").get(0).get("text").asText();

            HttpResponse<InputStream> stream = HTTP.send(completion(coordinator, 480, true), HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, stream.statusCode());
            List<String> events = new ArrayList<>();
            long cutAt = 0;
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    if (line.startsWith("data:")) {
                        events.add(line);
                        if (events.size() == 3) {
                            hosts.cut(1, nodes.get(1).process());
                            cutAt = System.nanoTime();
                        }
                    }
                }
            }
            long endedMs = (System.nanoTime() - cutAt) / 1_000_000;
            try {
                assertTrue(cutAt != 0, "the stream ended before the link was cut: " + events);
                String tail = String.join("\n", events.subList(Math.max(0, events.size() - 3), events.size()));
                String error = events.stream().filter(e -> e.contains("\"error\"")).findFirst().orElse(null);
                assertTrue(error != null, "no error event:\n" + tail);
                String cutNode = nodes.get(1).host() + ":" + nodes.get(1).port();
                assertTrue(error.contains("node") && error.contains("down"), "the error says a node went down: " + error);
                assertTrue(endedMs < 8000, "the stream ended " + endedMs + " ms after the link went down (step deadline 5 s)");
                assertTrue(events.size() < 480, "the stream stopped at the failure");

                JsonNode h = clusterHealth(coordinator);
                assertEquals("DOWN", h.get("status").asText(), h.toString());
                assertEquals("DOWN", h.get("nodes").get(1).get("state").asText(), "the cut node: " + h);
                assertEquals("UP", h.get("nodes").get(0).get("state").asText(), h.toString());
                assertEquals(503, LivenessIT.ready(coordinator), "not ready while a node is down");
                long t0 = System.nanoTime();
                HttpResponse<String> refused = HTTP.send(completion(coordinator, 8, false), HttpResponse.BodyHandlers.ofString());
                long refusedMs = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(refused.statusCode() >= 500, refused.statusCode() + " " + refused.body());
                assertTrue(refused.body().contains("\"error\"") && refused.body().contains(cutNode), refused.body());
                assertTrue(refusedMs < 8000, "a request while the node is down answered after " + refusedMs + " ms");
                System.out.println("[multihost] " + (hosts.namespaces() ? "link down" : "node frozen") + ": stream failed " + endedMs
                        + " ms after with " + error + "; a new request refused in " + refusedMs + " ms with " + refused.statusCode() + " "
                        + refused.body());
            } finally {
                hosts.restore(1, nodes.get(1).process());
            }
            long backMs = LivenessIT.awaitReady(coordinator, 200, Duration.ofSeconds(30));
            HttpResponse<String> after = HTTP.send(completion(coordinator, 12, false), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, after.statusCode(), after.body());
            assertEquals(before, JSON.readTree(after.body()).get("choices").get(0).get("text").asText(), "the same answer after recovery");
            assertEquals("UP", clusterHealth(coordinator).get("nodes").get(1).get("state").asText());
            System.out.println("[multihost] ready again " + backMs + " ms after " + (hosts.namespaces() ? "the link came back" : "SIGCONT"));
        }
    }
}
