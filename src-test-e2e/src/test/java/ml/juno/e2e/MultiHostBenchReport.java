package ml.juno.e2e;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.cluster.ClusterConfig;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.NodeAddress;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.Greedy;
import ml.juno.e2e.harness.TestHosts;
import ml.juno.engine.kv.KvType;
import ml.juno.model.wire.ActivationDtype;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Benchmark, not part of the suite (run it with {@code ./mvnw -o -pl src-test-e2e -am verify -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=MultiHostBenchReport -Djuno.bench.model=/work/models/tl-Q4_K_M.gguf}):
 * greedy decode time per token of pipeline-2 (one compute thread per node) with the nodes in network namespaces, the
 * same with 1 ms {@code tc netem} delay on every host link (where the kernel has netem; else through a user-space relay
 * that holds each chunk 0 and 1 ms each way), and with the nodes on loopback; plus each node's resident memory.
 */
class MultiHostBenchReport {

    static final int TOKENS = Integer.getInteger("juno.bench.tokens", 32);

    @Test
    void report() throws Exception {
        Path model = Path.of(System.getProperty("juno.bench.model", "/work/models/tl-Q4_K_M.gguf"));
        Assumptions.assumeTrue(Files.isRegularFile(model), "no benchmark model at " + model);
        EngineConfig ec = EngineConfig.defaults(model).withContextLength(256).withKvType(KvType.F32).withMaxSequences(1).withThreads(1);
        Map<String, String> props = Map.of("juno.node.models-dir", model.getParent().toString());
        try (TestHosts hosts = TestHosts.create(2)) {
            List<AppLauncher> nodes = new ArrayList<>();
            try {
                for (int i = 0; i < 2; i++) {
                    String address = hosts.address(i);
                    int port = hosts.port(i, 19092);
                    nodes.add(AppLauncher.startCommand("bench-host-" + i, address, port,
                            hosts.on(i, AppLauncher.javaCommand(AppLauncher.nodeApp(), address, port, props)), Duration.ofSeconds(90)));
                }
                List<String> addresses = nodes.stream().map(n -> n.host() + ":" + n.port()).toList();
                String where = hosts.namespaces() ? "namespaces" : "loopback (" + hosts.fallbackReason() + ")";
                run("pipeline-2 over " + where, addresses, ec);
                rss(nodes);
                String noDelay = hosts.delay(Duration.ofMillis(1));
                if (noDelay == null) {
                    run("pipeline-2 over namespaces, netem delay 1 ms each way on every host link", addresses, ec);
                } else {
                    // no netem in this kernel: a TCP relay in the root namespace holds every chunk for the delay instead
                    System.out.println("[bench] no netem run: " + noDelay);
                    for (long delayUs : new long[] {0, 1000}) {
                        List<DelayRelay> relays = new ArrayList<>();
                        try {
                            for (String a : addresses) {
                                relays.add(new DelayRelay(hosts.namespaces() ? "10.77.0.1" : "127.0.0.1", a, delayUs * 1000));
                            }
                            run("pipeline-2 over namespaces through a user-space TCP relay holding each chunk " + delayUs + " us each way",
                                    relays.stream().map(DelayRelay::address).toList(), ec);
                        } finally {
                            relays.forEach(DelayRelay::close);
                        }
                    }
                }
            } finally {
                nodes.forEach(AppLauncher::close);
            }
        }
        List<AppLauncher> loopback = new ArrayList<>();
        try {
            for (int i = 0; i < 2; i++) {
                loopback.add(AppLauncher.start("bench-loopback-" + i, AppLauncher.nodeApp(), props, Duration.ofSeconds(90)));
            }
            run("pipeline-2 over loopback", loopback.stream().map(n -> "127.0.0.1:" + n.port()).toList(), ec);
        } finally {
            loopback.forEach(AppLauncher::close);
        }
    }

    /**
     * A TCP relay that holds every chunk it reads for {@code delayNanos} before passing it on, each direction on its
     * own (a one-way delay without a bandwidth limit: what {@code netem delay} does, done in user space).
     */
    static final class DelayRelay implements AutoCloseable {
        private final java.net.ServerSocket server;
        private final String target;
        private final long delayNanos;
        private final List<java.net.Socket> sockets = new java.util.concurrent.CopyOnWriteArrayList<>();

        DelayRelay(String bind, String target, long delayNanos) throws java.io.IOException {
            this.server = new java.net.ServerSocket(0, 16, java.net.InetAddress.getByName(bind));
            this.target = target;
            this.delayNanos = delayNanos;
            Thread.ofVirtual().start(this::accept);
        }

        String address() {
            return server.getInetAddress().getHostAddress() + ":" + server.getLocalPort();
        }

        private void accept() {
            try {
                while (true) {
                    java.net.Socket client = server.accept();
                    NodeAddress t = NodeAddress.parse(target);
                    java.net.Socket upstream = new java.net.Socket(t.host(), t.port());
                    for (java.net.Socket so : List.of(client, upstream)) {
                        so.setTcpNoDelay(true);
                        sockets.add(so);
                    }
                    pump(client, upstream);
                    pump(upstream, client);
                }
            } catch (java.io.IOException closed) {
                // the relay was closed
            }
        }

        private record Chunk(long due, byte[] bytes) {}

        private void pump(java.net.Socket from, java.net.Socket to) {
            var queue = new java.util.concurrent.LinkedBlockingQueue<Chunk>();
            Thread.ofPlatform().daemon().start(() -> {
                byte[] buf = new byte[1 << 16];
                try (var in = from.getInputStream()) {
                    for (int n; (n = in.read(buf)) > 0; ) {
                        queue.put(new Chunk(System.nanoTime() + delayNanos, java.util.Arrays.copyOf(buf, n)));
                    }
                } catch (java.io.IOException | InterruptedException gone) {
                    // closed
                }
                queue.add(new Chunk(0, null));
            });
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    var out = to.getOutputStream();
                    while (true) {
                        Chunk c = queue.take();
                        if (c.bytes() == null) {
                            to.shutdownOutput();
                            return;
                        }
                        for (long wait; (wait = c.due() - System.nanoTime()) > 0; ) {
                            java.util.concurrent.locks.LockSupport.parkNanos(wait);
                        }
                        out.write(c.bytes());
                        out.flush();
                    }
                } catch (java.io.IOException | InterruptedException gone) {
                    // closed
                }
            });
        }

        @Override
        public void close() {
            try {
                server.close();
                for (java.net.Socket so : sockets) {
                    so.close();
                }
            } catch (java.io.IOException e) {
                System.out.println("[bench] relay close: " + e.getMessage());
            }
        }
    }

    static void rss(List<AppLauncher> nodes) throws Exception {
        for (AppLauncher n : nodes) {
            String status = Files.readString(Path.of("/proc", Long.toString(n.process().pid()), "status"));
            String rss = status.lines().filter(l -> l.startsWith("VmRSS") || l.startsWith("RssFile") || l.startsWith("RssAnon"))
                    .map(l -> l.replaceAll("\\s+", " ")).reduce((a, b) -> a + ", " + b).orElse("?");
            System.out.println("[bench] node " + n.url("") + ": " + rss);
        }
    }

    static void run(String what, List<String> addresses, EngineConfig ec) throws Exception {
        ClusterConfig cc = new ClusterConfig(addresses.stream().map(NodeAddress::parse).toList(), Parallelism.PIPELINE,
                new ClusterConfig.Wire(ActivationDtype.FLOAT16, ByteOrder.LITTLE_ENDIAN),
                new ClusterConfig.Deadlines(Duration.ofMinutes(2), Duration.ofMinutes(2), Duration.ofSeconds(5), Duration.ofSeconds(60)), 1);
        try (InferenceEngine e = EngineAssembly.open(ec, ClusterExecutor.factory(cc, ec))) {
            Greedy.tokens(e, "Once upon a time", 4); // warm-up
            long best = Long.MAX_VALUE;
            for (int round = 0; round < 3; round++) {
                long t0 = System.nanoTime();
                Greedy.tokens(e, "Once upon a time", TOKENS);
                best = Math.min(best, System.nanoTime() - t0);
            }
            System.out.printf("[bench] %s: %.1f ms/token (best of 3 runs of %d tokens, prompt included)%n", what, best / 1e6 / TOKENS, TOKENS);
        }
    }
}
