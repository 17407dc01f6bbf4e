package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.TestHosts;
import org.junit.jupiter.api.Test;

/**
 * Nodes that find the coordinator instead of the other way round: {@code juno coordinator --min-nodes 2} and nodes
 * started with {@code juno.node.join} (what {@code juno node --join URL} sets), each on a host of its own (a network
 * namespace, {@link TestHosts}; loopback where this machine cannot make them), reached at the address their
 * announcements come from. The coordinator waits for two, serves, logs every join and leave, reloads the shards over
 * three when a third joins and over two when it stops, and gives the same greedy answer in every shape; a node that
 * dies leaves when its lease runs out, and the cluster stops serving below two.
 */
class NodeRegistryIT {
    static final HttpClient HTTP = HttpClient.newHttpClient();
    static final ObjectMapper JSON = new ObjectMapper();

    static AppLauncher node(TestHosts hosts, int host, String joinUrl) throws Exception {
        int port = hosts.port(host, MultiHostIT.NODE_PORT);
        List<String> java = AppLauncher.javaCommand(AppLauncher.nodeApp(), hosts.address(host), port,
                Map.of("juno.node.id", "host-" + host, "juno.node.join", joinUrl, "juno.node.announce-period-ms", "500"));
        return AppLauncher.startCommand("registry-node-" + host, hosts.address(host), port, hosts.on(host, java), Duration.ofSeconds(90));
    }

    static JsonNode get(AppLauncher coordinator, String path) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(coordinator.url(path)).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(r.body());
    }

    static String answer(AppLauncher coordinator) throws Exception {
        HttpResponse<String> r = HTTP.send(MultiHostIT.completion(coordinator, 12, false), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body()).get("choices").get(0).get("text").asText();
    }

    /** Waits until the coordinator serves over {@code n} nodes, all up. */
    static void awaitServing(AppLauncher coordinator, int n) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        JsonNode h = null;
        while (System.nanoTime() < deadline) {
            h = get(coordinator, "/v1/cluster/health");
            if ("UP".equals(h.path("status").asText()) && h.path("nodes").size() == n) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("not serving over " + n + " nodes within 60 s: " + h + "\n" + coordinator.log());
    }

    @Test
    void nodesJoinTheCoordinator_theClusterReloadsWhenOneJoinsOrLeaves_andAnswersTheSame() throws Exception {
        try (TestHosts hosts = TestHosts.create(3)) {
            int apiPort = AppLauncher.freePort();
            List<String> cmd = LivenessIT.cli("coordinator", "--model-path", MultiHostIT.STORIES.toString(), "--min-nodes", "2",
                    "--node-lease", "3s", "--api-port", Integer.toString(apiPort), "--host", hosts.namespaces() ? "0.0.0.0" : "127.0.0.1",
                    "--step-timeout", "5s", "--threads-per-node", "1");
            String join = "http://" + hosts.rootAddress() + ":" + apiPort;
            List<AppLauncher> nodes = new ArrayList<>();
            try (AppLauncher coordinator = AppLauncher.startCommand("registry-coordinator", apiPort, cmd, Duration.ofSeconds(60))) {
                nodes.add(node(hosts, 0, join));
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (get(coordinator, "/v1/cluster/nodes").path("nodes").size() < 1 && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                }
                JsonNode members = get(coordinator, "/v1/cluster/nodes");
                assertEquals(1, members.get("nodes").size(), members + "\n" + coordinator.log());
                assertEquals(hosts.address(0) + ":" + nodes.get(0).port(), members.get("nodes").get(0).get("address").asText(),
                        "reached at the address its announcement came from");
                assertEquals(503, LivenessIT.ready(coordinator), "one node of two: not serving yet");

                nodes.add(node(hosts, 1, join));
                LocalServer.awaitReady(coordinator, Duration.ofSeconds(60));
                awaitServing(coordinator, 2);
                String two = answer(coordinator);

                AppLauncher third = node(hosts, 2, join);
                awaitServing(coordinator, 3);
                assertEquals(two, answer(coordinator), "the same greedy answer over three pipeline stages");

                third.close(); // stops cleanly: it says it leaves
                awaitServing(coordinator, 2);
                assertEquals(two, answer(coordinator), "and over two again");

                String log = coordinator.log();
                assertTrue(log.contains("(host-2) joined the cluster: 3 members"), log);
                assertTrue(log.contains("(host-2) left the cluster (it said so): 2 members"), log);
                assertTrue(log.contains("reloading the shards over 3 nodes") && log.contains("reloading the shards over 2 nodes"), log);

                nodes.get(1).process().destroyForcibly(); // dies: leaves when its lease runs out
                long t0 = System.nanoTime();
                LivenessIT.awaitReady(coordinator, 503, Duration.ofSeconds(20));
                deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (!coordinator.log().contains("(host-1) left the cluster (no announcement for 3 s): 1 member") && System.nanoTime() < deadline) {
                    Thread.sleep(200);
                }
                assertTrue(coordinator.log().contains("(host-1) left the cluster (no announcement for 3 s): 1 member"), coordinator.log());
                assertTrue(coordinator.log().contains("waiting for nodes to join (juno node --join): 1 of 2"), coordinator.log());
                System.out.println("[registry] " + (hosts.namespaces() ? "network namespaces" : "loopback") + ": a killed node left after "
                        + (System.nanoTime() - t0) / 1_000_000 + " ms");
            } finally {
                for (AppLauncher n : nodes) {
                    n.close();
                }
            }
        }
    }
}
