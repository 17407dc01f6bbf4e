package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.JunoCli;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.e2e.harness.NodeProcesses;
import org.junit.jupiter.api.Test;

/**
 * Liveness with real processes: a frozen node (SIGSTOP) is found by the heartbeat within seconds although the step
 * deadline is 60 s (the stream ends with an error event, readiness turns DOWN) and serves again after SIGCONT; while
 * steps flow the heartbeat leaves the nodes alone, and an idle node is asked every second; a
 * {@code juno local} whose launcher is SIGKILLed takes its server with it; {@code juno cluster} restarts a coordinator
 * killed with SIGKILL.
 */
class LivenessIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", ROOT.resolve("models").toString())).toAbsolutePath();
    static final Path TINY = MODELS.resolve("testdata/tiny-random/tiny-llama-random-F16.gguf");
    static final HttpClient HTTP = HttpClient.newHttpClient();

    /** {@code juno ARGS} as the launcher runs it, in a small heap. */
    static List<String> cli(String... args) {
        return JunoCli.command(List.of("-Xmx128m"), args);
    }

    static void signal(long pid, String sig) throws Exception {
        assertEquals(0, new ProcessBuilder("kill", "-" + sig, Long.toString(pid)).start().waitFor());
    }

    static int ready(AppLauncher s) {
        try {
            return HTTP.send(HttpRequest.newBuilder(s.url("/q/health/ready")).timeout(Duration.ofSeconds(2)).build(),
                    HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (Exception e) {
            return -1;
        }
    }

    static long awaitReady(AppLauncher s, int status, Duration limit) throws Exception {
        long t0 = System.nanoTime();
        while (ready(s) != status) {
            if (System.nanoTime() - t0 > limit.toNanos()) {
                throw new AssertionError("readiness not " + status + " within " + limit + "; log:\n" + s.log());
            }
            Thread.sleep(100);
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }

    static HttpRequest completion(AppLauncher s, int maxTokens, boolean stream) {
        String body = "{\"model\":\"tiny-llama-random-F16\",\"prompt\":\"Once upon a time\",\"max_tokens\":" + maxTokens
                + ",\"temperature\":0,\"stream\":" + stream + "}";
        return HttpRequest.newBuilder(s.url("/v1/completions")).header("Content-Type", "application/json")
                .timeout(Duration.ofSeconds(90)).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    @Test
    void aFrozenNode_isMarkedDownWithinSeconds_notAtTheStepDeadline_andServesAgainAfterCont() throws Exception {
        try (NodeProcesses nodes = NodeProcesses.start("frozen-node", 2)) {
            int port = AppLauncher.freePort();
            try (AppLauncher coordinator = AppLauncher.startCommand("juno-coordinator-frozen", port,
                    cli("coordinator", "--model-path", TINY.toString(), "--nodes", String.join(",", nodes.addresses(2)), "--api-port",
                            Integer.toString(port), "--threads-per-node", "1"), Duration.ofSeconds(60))) {
                LocalServer.awaitReady(coordinator, Duration.ofSeconds(60));
                long nodePid = nodes.get(1).process().pid();
                HttpResponse<InputStream> stream = HTTP.send(completion(coordinator, 480, true), HttpResponse.BodyHandlers.ofInputStream());
                assertEquals(200, stream.statusCode());
                List<String> events = new ArrayList<>();
                long frozenAt = 0;
                try (BufferedReader in = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        if (line.startsWith("data:")) {
                            events.add(line);
                            if (events.size() == 3) {
                                signal(nodePid, "STOP");
                                frozenAt = System.nanoTime();
                            }
                        }
                    }
                }
                long endedMs = (System.nanoTime() - frozenAt) / 1_000_000;
                long downMs = awaitReady(coordinator, 503, Duration.ofSeconds(10));
                signal(nodePid, "CONT");
                assertTrue(frozenAt != 0, "the stream ended before the node was frozen: " + events);
                assertTrue(events.stream().anyMatch(e -> e.contains("\"error\"")), "no error event: " + events.subList(Math.max(0, events.size() - 3), events.size()));
                assertTrue(endedMs < 8000, "the stream ended " + endedMs + " ms after SIGSTOP (step deadline 60 s)");
                long backMs = awaitReady(coordinator, 200, Duration.ofSeconds(30));
                HttpResponse<String> after = HTTP.send(completion(coordinator, 8, false), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, after.statusCode(), after.body());
                System.out.println("frozen node: stream failed " + endedMs + " ms after SIGSTOP, ready again " + backMs + " ms after SIGCONT");
            }
        }
    }

    /** How many status calls (heartbeats) the node has served, from its Prometheus metrics. */
    static long statusCalls(AppLauncher node) throws Exception {
        String metrics = HTTP.send(HttpRequest.newBuilder(node.url("/q/metrics")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        long sum = 0;
        for (String line : metrics.lines().toList()) {
            if (line.startsWith(STATUS_METRIC + "{") && line.contains("method=\"GetStatus\"")) {
                sum += (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return sum;
    }

    /** Streams one completion of 480 tokens to its end; its number of events. */
    static int streamEvents(AppLauncher coordinator) throws Exception {
        HttpResponse<InputStream> stream = HTTP.send(completion(coordinator, 480, true), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, stream.statusCode());
        int events = 0;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                if (line.startsWith("data:")) {
                    events++;
                }
            }
        }
        return events;
    }

    static final String STATUS_METRIC = "grpc_server_requests_received_messages_total";

    @Test
    void heartbeats_skipANodeThatAnswersSteps_andAskAnIdleOne() throws Exception {
        try (NodeProcesses nodes = NodeProcesses.start("heartbeat-node", 2)) {
            int port = AppLauncher.freePort();
            try (AppLauncher coordinator = AppLauncher.startCommand("juno-coordinator-heartbeat", port,
                    cli("coordinator", "--model-path", TINY.toString(), "--nodes", String.join(",", nodes.addresses(2)), "--api-port",
                            Integer.toString(port), "--threads-per-node", "1"), Duration.ofSeconds(60))) {
                LocalServer.awaitReady(coordinator, Duration.ofSeconds(60));
                long idleFrom = statusCalls(nodes.get(1));
                Thread.sleep(3_500);
                long idle = statusCalls(nodes.get(1)) - idleFrom;
                assertTrue(idle >= 2, "an idle node is asked for its status every second: " + idle + " calls in 3.5 s");

                // generations back to back for 3 s: every step's answer shows both nodes alive
                assertTrue(streamEvents(coordinator) > 100, "a generation runs");
                long busyFrom = statusCalls(nodes.get(1));
                long t0 = System.nanoTime();
                int generations = 0;
                while (System.nanoTime() - t0 < 3_000_000_000L) {
                    assertTrue(streamEvents(coordinator) > 100, "a generation runs");
                    generations++;
                }
                long busyMs = (System.nanoTime() - t0) / 1_000_000;
                long busy = statusCalls(nodes.get(1)) - busyFrom;
                assertTrue(busy <= 1, busy + " status calls (heartbeat and health ping) to a node answering steps in " + busyMs + " ms (" + generations
                        + " generations; idle: " + idle + " in 3.5 s)");
            }
        }
    }

    @Test
    void juno_local_serverExitsWhenItsLauncherIsKilled() throws Exception {
        AppLauncher local = LocalServer.start(MODELS.resolve("stories260K.gguf"), "-Xmx128m");
        try {
            Optional<ProcessHandle> server = local.process().descendants().filter(p -> p.info().commandLine().orElse("").contains("quarkus-run.jar"))
                    .findFirst();
            assertTrue(server.isPresent(), "the server JVM is a child of the launcher");
            local.process().destroyForcibly(); // SIGKILL: the launcher's shutdown hooks do not run
            assertTrue(server.get().onExit().get(15, TimeUnit.SECONDS) != null);
            assertTrue(!server.get().isAlive(), "the server outlived its launcher");
        } finally {
            local.close();
        }
    }

    @Test
    void juno_cluster_restartsAKilledCoordinator() throws Exception {
        int port = AppLauncher.freePort();
        Path logs = java.nio.file.Files.createTempDirectory("juno-cluster-logs-");
        try (AppLauncher cluster = AppLauncher.startCommand("juno-cluster-restart", port,
                cli("cluster", "--model-path", MODELS.resolve("stories260K.gguf").toString(), "--nodes", "1", "--api-port", Integer.toString(port),
                        "--log-dir", logs.toString()), Duration.ofSeconds(90))) {
            LocalServer.awaitReady(cluster, Duration.ofSeconds(60));
            ProcessHandle coordinator = cluster.process().children()
                    .filter(p -> p.info().commandLine().orElse("").contains("coordinator-service")).findFirst().orElseThrow();
            signal(coordinator.pid(), "KILL");
            coordinator.onExit().get(10, TimeUnit.SECONDS);
            long back = awaitReady(cluster, 200, Duration.ofSeconds(60));
            assertTrue(cluster.process().isAlive());
            assertTrue(cluster.log().contains("the coordinator died (exit 137); restarting it"), cluster.log());
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(cluster.url("/v1/models")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode(), r.body());
            System.out.println("coordinator restarted and ready " + back + " ms after SIGKILL");
        }
    }
}
