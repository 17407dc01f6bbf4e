package ml.juno.e2e;

import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import ml.juno.coordinator.cluster.ClusterConfig;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.ClusterStats;
import ml.juno.coordinator.cluster.NodeAddress;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.ExecutorFactory;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.e2e.harness.Greedy;
import ml.juno.e2e.harness.NodeProcesses;
import ml.juno.engine.kv.KvType;
import ml.juno.model.wire.ActivationDtype;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Benchmark, not part of the suite (run it with {@code ./mvnw -o -pl src-test-e2e -am verify -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=ClusterBenchReport -Djuno.bench.model=/work/bench/tl-q4_k_m.gguf}):
 * greedy decode tokens/s, bytes on the wire per token (coordinator to nodes, and rank to rank) and time per hop for
 * local vs pipeline-3 vs tensor-2 on three real node processes. {@code -Djuno.bench.nodes=HOST:PORT,…} uses nodes
 * started by hand instead (e.g. each under {@code taskset}) and {@code -Djuno.bench.runs=local,tensor} picks the runs.
 */
class ClusterBenchReport {

    static final int TOKENS = Integer.getInteger("juno.bench.tokens", 16);
    /** Sequences generated at once ({@code -Djuno.bench.concurrency}); the figure is then their aggregate tokens/s. */
    static final int CONCURRENCY = Integer.getInteger("juno.bench.concurrency", 1);

    /** {@code CONCURRENCY} greedy generations of {@code TOKENS} tokens at once (different prompts), all finished. */
    static void generate(InferenceEngine e, String prompt, int tokens) throws Exception {
        if (CONCURRENCY == 1) {
            Greedy.tokens(e, prompt, tokens);
            return;
        }
        List<java.util.concurrent.CompletableFuture<List<Integer>>> all = new java.util.ArrayList<>();
        for (int i = 0; i < CONCURRENCY; i++) {
            String p = prompt + " " + i;
            all.add(java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return Greedy.tokens(e, p, tokens);
                } catch (Exception x) {
                    throw new IllegalStateException(x);
                }
            }, java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()));
        }
        for (var f : all) {
            f.join();
        }
    }

    /** The same report from a plain {@code java} command (the test class path), for runs under {@code taskset}. */
    public static void main(String[] args) throws Exception {
        new ClusterBenchReport().report();
    }

    @Test
    void report() throws Exception {
        Path model = Path.of(System.getProperty("juno.bench.model", "/work/bench/tl-q4_k_m.gguf"));
        Assumptions.assumeTrue(Files.isRegularFile(model), "no benchmark model at " + model);
        int threads = Integer.getInteger("juno.bench.threads", Runtime.getRuntime().availableProcessors());
        EngineConfig ec = EngineConfig.defaults(model).withContextLength(256).withKvType(KvType.F32).withMaxSequences(Math.max(1, CONCURRENCY)).withThreads(threads);
        String prompt = "Once upon a time";
        List<String> runs = List.of(System.getProperty("juno.bench.runs", "local,pipeline,tensor").split(","));
        if (runs.contains("local")) {
            try (InferenceEngine local = EngineAssembly.open(ec)) {
                generate(local, prompt, 8); // warm-up
                long t0 = System.nanoTime();
                generate(local, prompt, TOKENS);
                report("local", t0, null, null, null);
            }
        }
        String given = System.getProperty("juno.bench.nodes", "");
        if (!given.isBlank()) {
            List<String> addresses = List.of(given.split(","));
            for (String r : runs) {
                if (!r.equals("local")) {
                    run(addresses, ec, Parallelism.parse(r), addresses.size(), threads, prompt);
                }
            }
            return;
        }
        try (NodeProcesses nodes = NodeProcesses.start("bench-node", 3)) {
            if (runs.contains("pipeline")) {
                run(nodes.addresses(3), ec, Parallelism.PIPELINE, 3, threads, prompt);
            }
            if (runs.contains("tensor")) {
                run(nodes.addresses(2), ec, Parallelism.TENSOR, 2, threads, prompt);
            }
        }
    }

    private static void run(List<String> nodes, EngineConfig ec, Parallelism p, int n, int threads, String prompt) throws Exception {
        List<NodeAddress> addresses = nodes.stream().map(NodeAddress::parse).toList();
        ClusterConfig cc = new ClusterConfig(addresses, p, new ClusterConfig.Wire(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                new ClusterConfig.Deadlines(Duration.ofMinutes(2), Duration.ofMinutes(2), Duration.ofSeconds(5), Duration.ofSeconds(60)), threads);
        AtomicReference<ClusterExecutor> executor = new AtomicReference<>();
        ExecutorFactory f = (file, m, context, blocks) -> {
            ClusterExecutor ex = (ClusterExecutor) ClusterExecutor.factory(cc, ec).open(file, m, context, blocks);
            executor.set(ex);
            return ex;
        };
        try (InferenceEngine e = EngineAssembly.open(ec, f)) {
            generate(e, prompt, 8);
            ClusterStats before = executor.get().stats();
            var busy0 = executor.get().topology().nodes().stream().mapToLong(ml.juno.coordinator.engine.Topology.Node::computeNanos).toArray();
            long t0 = System.nanoTime();
            generate(e, prompt, TOKENS);
            long wall = System.nanoTime() - t0;
            var nodesNow = executor.get().topology().nodes();
            StringBuilder util = new StringBuilder("; stage utilisation");
            for (int i = 0; i < nodesNow.size(); i++) {
                util.append(String.format(" %.0f%%", 100.0 * (nodesNow.get(i).computeNanos() - busy0[i]) / wall));
            }
            report(p.name().toLowerCase() + "-" + n + (Boolean.getBoolean("juno.cluster.hub") ? " (hub)" : "")
                    + " mb" + Integer.getInteger("juno.cluster.micro-batches", 1), t0, executor.get().stats().minus(before), p, util.toString());
        }
    }

    private static void report(String name, long t0, ClusterStats s, Parallelism p, String util) {
        double secs = (System.nanoTime() - t0) / 1e9;
        int tokens = TOKENS * CONCURRENCY;
        String line = String.format("[bench] %-11s x%d %6.2f tok/s (%d tokens incl. prefill of the prompts, %.2f s)", name, CONCURRENCY,
                tokens / secs, tokens, secs);
        if (s != null) {
            line += String.format("; coordinator wire %.0f B/token (sent %d, received %d); %d hops, %.3f ms overhead per hop%s",
                    s.coordinatorBytesPerToken(), s.bytesSent(), s.bytesReceived(), s.hops(), s.overheadMillisPerHop(),
                    p == Parallelism.PIPELINE
                            ? String.format("; stage to stage %.0f B/token", s.peerBytesPerToken()) + util
                            : p == Parallelism.TENSOR && s.reductions() > 0
                            ? String.format("; rank to rank %.0f B/token, %d all-reduces, %.3f ms per all-reduce (a rank's node-to-node hop)",
                            s.peerBytesPerToken(), s.reductions(), s.millisPerReduction())
                            : "");
        }
        System.out.println(line);
    }
}
