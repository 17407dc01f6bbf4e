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
 * greedy decode tokens/s, bytes on the wire per token and per-hop overhead for local vs pipeline-3 vs tensor-2 on
 * three real node processes.
 */
class ClusterBenchReport {

    static final int TOKENS = Integer.getInteger("juno.bench.tokens", 16);

    @Test
    void report() throws Exception {
        Path model = Path.of(System.getProperty("juno.bench.model", "/work/bench/tl-q4_k_m.gguf"));
        Assumptions.assumeTrue(Files.isRegularFile(model), "no benchmark model at " + model);
        int threads = Integer.getInteger("juno.bench.threads", Runtime.getRuntime().availableProcessors());
        EngineConfig ec = EngineConfig.defaults(model).withContextLength(256).withKvType(KvType.F32).withMaxSequences(1).withThreads(threads);
        String prompt = "Once upon a time";
        try (InferenceEngine local = EngineAssembly.open(ec)) {
            Greedy.tokens(local, prompt, 2); // warm-up
            long t0 = System.nanoTime();
            Greedy.tokens(local, prompt, TOKENS);
            report("local", t0, null, null);
        }
        try (NodeProcesses nodes = NodeProcesses.start("bench-node", 3)) {
            run(nodes, model, ec, Parallelism.PIPELINE, 3, threads, prompt);
            run(nodes, model, ec, Parallelism.TENSOR, 2, threads, prompt);
        }
    }

    private static void run(NodeProcesses nodes, Path model, EngineConfig ec, Parallelism p, int n, int threads, String prompt) throws Exception {
        List<NodeAddress> addresses = nodes.addresses(n).stream().map(NodeAddress::parse).toList();
        ClusterConfig cc = new ClusterConfig(addresses, p, new ClusterConfig.Wire(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                new ClusterConfig.Deadlines(Duration.ofMinutes(2), Duration.ofMinutes(2), Duration.ofSeconds(5), Duration.ofSeconds(60)), threads);
        AtomicReference<ClusterExecutor> executor = new AtomicReference<>();
        ExecutorFactory f = (file, m, context, blocks) -> {
            ClusterExecutor ex = (ClusterExecutor) ClusterExecutor.factory(cc, ec).open(file, m, context, blocks);
            executor.set(ex);
            return ex;
        };
        try (InferenceEngine e = EngineAssembly.open(ec, f)) {
            Greedy.tokens(e, prompt, 2);
            ClusterStats before = executor.get().stats();
            long t0 = System.nanoTime();
            Greedy.tokens(e, prompt, TOKENS);
            report(p.name().toLowerCase() + "-" + n, t0, executor.get().stats().minus(before), p);
        }
    }

    private static void report(String name, long t0, ClusterStats s, Parallelism p) {
        double secs = (System.nanoTime() - t0) / 1e9;
        String line = String.format("[bench] %-11s %6.2f tok/s (%d tokens incl. prefill of the prompt, %.2f s)", name, TOKENS / secs, TOKENS, secs);
        if (s != null) {
            double perToken = (double) (s.bytesSent() + s.bytesReceived()) / TOKENS;
            line += String.format("; wire %.0f B/token (sent %d, received %d); %d hops, %.3f ms overhead per hop%s",
                    perToken, s.bytesSent(), s.bytesReceived(), s.hops(), s.overheadMillisPerHop(),
                    p == Parallelism.TENSOR && s.reductions() > 0
                            ? String.format(", %d all-reduces, %.3f ms per all-reduce round", s.reductions(),
                            (s.hopNanos() - s.computeNanos()) / 1e6 / s.hops() * s.steps() / s.reductions())
                            : "");
        }
        System.out.println(line);
    }
}
