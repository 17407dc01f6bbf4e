package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import ml.juno.coordinator.tls.ClusterCertificates;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import ml.juno.node.v1.NodeServiceGrpc;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.StatusRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code juno node --tls-dir} with certificates from {@code juno certs}: only a client with a certificate from the
 * cluster's CA may call it (plaintext, no certificate, another CA's certificate: refused); a coordinator refuses a node
 * whose certificate is not from its CA; {@code juno coordinator --tls-dir} serves over such a node. Keys are 0600.
 */
class MutualTlsIT {
    static final Path ROOT = Path.of(System.getProperty("juno.root", "..")).toAbsolutePath().normalize();
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", ROOT.resolve("models").toString())).toAbsolutePath();

    @TempDir
    Path tmp;

    static NodeStatus status(int port, ChannelCredentials creds) throws InterruptedException {
        ManagedChannel ch = Grpc.newChannelBuilderForAddress("127.0.0.1", port, creds).build();
        try {
            return NodeServiceGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS).getStatus(StatusRequest.getDefaultInstance());
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    static ChannelCredentials client(Path certDir, String name, Path trustDir) throws Exception {
        TlsChannelCredentials.Builder b = TlsChannelCredentials.newBuilder().trustManager(trustDir.resolve("ca.pem").toFile());
        if (name != null) {
            b.keyManager(certDir.resolve(name + ".pem").toFile(), certDir.resolve(name + "-key.pem").toFile());
        }
        return b.build();
    }

    @Test
    void onlyPeersWithTheClustersCa_mayTalk_andACoordinatorServesOverTls() throws Exception {
        Path ours = tmp.resolve("ours");
        Path theirs = tmp.resolve("theirs");
        ClusterCertificates.write(ours, 1, List.of(), Duration.ofDays(1));
        ClusterCertificates.write(theirs, 1, List.of(), Duration.ofDays(1));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(ours.resolve("node-0-key.pem"))));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(ours)));

        int port = AppLauncher.freePort();
        List<String> cmd = LivenessIT.cli("node", "--port", Integer.toString(port), "--node-id", "node-0", "--tls-dir", ours.toString(),
                "--models-dir", MODELS.toString());
        Path log = tmp.resolve("node.log");
        Process node = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            ChannelCredentials coordinator = client(ours, "coordinator", ours);
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            NodeStatus ok = null;
            while (ok == null) {
                try {
                    ok = status(port, coordinator);
                } catch (StatusRuntimeException notYet) {
                    assertTrue(node.isAlive() && System.nanoTime() < deadline, "node not up over TLS:\n" + Files.readString(log));
                    Thread.sleep(300);
                }
            }
            assertEquals("node-0", ok.getNodeId());

            assertThrows(StatusRuntimeException.class, () -> status(port, InsecureChannelCredentials.create()), "plaintext");
            assertThrows(StatusRuntimeException.class, () -> status(port, client(ours, null, ours)), "no client certificate");
            assertThrows(StatusRuntimeException.class, () -> status(port, client(theirs, "coordinator", ours)), "another CA's certificate");
            assertThrows(StatusRuntimeException.class, () -> status(port, client(theirs, "coordinator", theirs)),
                    "a coordinator of another CA refuses this node");
            HttpClient http = HttpClient.newHttpClient();
            assertThrows(java.io.IOException.class, () -> http.send(HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/q/health/live"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.discarding()), "no plaintext HTTP either");

            int api = AppLauncher.freePort();
            try (AppLauncher coord = AppLauncher.startCommand("juno-coordinator-tls", api, LivenessIT.cli("coordinator", "--model-path",
                    MODELS.resolve("stories260K.gguf").toString(), "--nodes", "127.0.0.1:" + port, "--tls-dir", ours.toString(), "--api-port",
                    Integer.toString(api), "--threads-per-node", "1"), Duration.ofSeconds(60))) {
                LocalServer.awaitReady(coord, Duration.ofSeconds(60));
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(coord.url("/v1/completions")).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":8}")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertEquals(200, r.statusCode(), r.body());
            }
        } finally {
            node.destroy();
            if (!node.waitFor(10, TimeUnit.SECONDS)) {
                node.destroyForcibly();
            }
        }
    }

    /**
     * Tensor-parallel ranks and pipeline stages dial each other with their own certificates: two nodes that take only
     * clients of the cluster's CA (and no plaintext) reduce with each other, or pass rows on, and give the local engine's tokens.
     */
    @Test
    void tensorRanksAndPipelineStages_talkToEachOtherOverMutualTls() throws Exception {
        Path ours = tmp.resolve("ours");
        ClusterCertificates.write(ours, 2, List.of(), Duration.ofDays(1));
        Path model = MODELS.resolve("stories260K.gguf");
        List<Process> nodes = new java.util.ArrayList<>();
        List<ml.juno.coordinator.cluster.NodeAddress> addresses = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                int port = AppLauncher.freePort();
                Path log = tmp.resolve("node-" + i + ".log");
                nodes.add(new ProcessBuilder(LivenessIT.cli("node", "--port", Integer.toString(port), "--node-id", "node-" + i, "--tls-dir",
                        ours.toString(), "--models-dir", MODELS.toString())).redirectErrorStream(true).redirectOutput(log.toFile()).start());
                addresses.add(ml.juno.coordinator.cluster.NodeAddress.parse("127.0.0.1:" + port));
            }
            var ec = ml.juno.coordinator.engine.EngineConfig.defaults(model).withContextLength(128)
                    .withKvType(ml.juno.engine.kv.KvType.F32).withMaxSequences(1).withThreads(1);
            List<Integer> want;
            try (var local = ml.juno.coordinator.engine.EngineAssembly.open(ec)) {
                want = ml.juno.e2e.harness.Greedy.tokens(local, "Once upon a time", 12);
            }
            for (var p : ml.juno.coordinator.cluster.Parallelism.values()) { // tensor ranks and pipeline stages dial each other too
                var cc = new ml.juno.coordinator.cluster.ClusterConfig(addresses, p,
                        new ml.juno.coordinator.cluster.ClusterConfig.Wire(ml.juno.model.wire.ActivationDtype.FLOAT32, java.nio.ByteOrder.LITTLE_ENDIAN),
                        new ml.juno.coordinator.cluster.ClusterConfig.Deadlines(Duration.ofSeconds(20), Duration.ofSeconds(60), Duration.ofSeconds(5),
                                Duration.ofSeconds(90)), 1, ours);
                var executor = new java.util.concurrent.atomic.AtomicReference<ml.juno.coordinator.cluster.ClusterExecutor>();
                ml.juno.coordinator.engine.ExecutorFactory f = (file, m, context, blocks) -> {
                    var ex = (ml.juno.coordinator.cluster.ClusterExecutor) ml.juno.coordinator.cluster.ClusterExecutor.factory(cc, ec)
                            .open(file, m, context, blocks);
                    executor.set(ex);
                    return ex;
                };
                try (var e = ml.juno.coordinator.engine.EngineAssembly.open(ec, f)) {
                    assertEquals(want, ml.juno.e2e.harness.Greedy.tokens(e, "Once upon a time", 12), p + "-2 over mutual TLS");
                    var stats = executor.get().stats();
                    if (p == ml.juno.coordinator.cluster.Parallelism.TENSOR) {
                        assertTrue(stats.reductions() > 0 && stats.peerBytes() >= stats.reductions() * 2 * 64 * 4,
                                "the ranks sent each other their partials: " + stats);
                    } else {
                        assertTrue(stats.peerBytes() >= stats.tokens() * 64 * 4, "stage 0 sent its rows to stage 1: " + stats);
                    }
                }
            }
        } finally {
            for (Process node : nodes) {
                node.destroy();
                if (!node.waitFor(10, TimeUnit.SECONDS)) {
                    node.destroyForcibly();
                }
            }
        }
    }
}
