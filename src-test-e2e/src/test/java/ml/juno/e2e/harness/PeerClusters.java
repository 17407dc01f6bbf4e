package ml.juno.e2e.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import ml.juno.coordinator.cluster.ClusterConfig;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.NodeAddress;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.ExecutorFactory;
import ml.juno.coordinator.engine.GenerationListener;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.sampling.SamplingParams;
import ml.juno.coordinator.sampling.StopCondition;
import ml.juno.coordinator.sampling.TokenLogprobs;
import ml.juno.coordinator.scheduler.GenerationRequest;
import ml.juno.coordinator.scheduler.SubmitResult;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.model.wire.ActivationDtype;

/**
 * What the node-to-node ITs ({@code TensorPeersIT}, {@code PipelinePeersIT}) share: a cluster of real nodes (FLOAT32
 * little-endian wire, a short step deadline) whose executor the test keeps for its counters, and the check that node
 * 1 killed during a generation ends it with an error naming it within the step deadline and, restarted on its port,
 * is reloaded and gives the tokens again.
 */
public final class PeerClusters {
    public static final Duration STEP = Duration.ofSeconds(5);

    private PeerClusters() {
    }

    /** Opens {@code p} over {@code nodes}' first {@code n} nodes and keeps the executor in {@code into}. */
    public static ExecutorFactory capturing(NodeProcesses nodes, int n, Parallelism p, EngineConfig ec, AtomicReference<ClusterExecutor> into) {
        List<NodeAddress> addresses = nodes.addresses(n).stream().map(NodeAddress::parse).toList();
        ClusterConfig cc = new ClusterConfig(addresses, p, new ClusterConfig.Wire(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                new ClusterConfig.Deadlines(STEP, Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(30)), 1);
        return (file, m, context, blocks) -> {
            ClusterExecutor ex = (ClusterExecutor) ClusterExecutor.factory(cc, ec).open(file, m, context, blocks);
            into.set(ex);
            return ex;
        };
    }

    /**
     * Kills node 1 ({@code nodeId}) while a 400-token greedy generation of {@code prompt} runs: it must end with an
     * error naming that node within the step deadline; then restarts it on its port and waits for the coordinator to
     * reload it: greedy tokens of {@code prompt} must equal {@code want} again.
     */
    public static void killNode1ThenRestart(InferenceEngine e, NodeProcesses nodes, AtomicReference<ClusterExecutor> executor,
                                            String prompt, List<Integer> want) throws Exception {
        killNode1ThenRestart(e, nodes, executor, prompt, want, 1);
    }

    /**
     * {@link #killNode1ThenRestart(InferenceEngine, NodeProcesses, AtomicReference, String, List)} with {@code streams}
     * generations running at once (a pipeline then has several steps in flight when the node dies): every one must end
     * with an error naming the node within the step deadline.
     */
    public static void killNode1ThenRestart(InferenceEngine e, NodeProcesses nodes, AtomicReference<ClusterExecutor> executor,
                                            String prompt, List<Integer> want, int streams) throws Exception {
        AtomicInteger got = new AtomicInteger();
        CountDownLatch started = new CountDownLatch(4 * streams);
        List<CompletableFuture<String>> ends = new java.util.ArrayList<>();
        for (int i = 0; i < streams; i++) {
            CompletableFuture<String> done = new CompletableFuture<>();
            ends.add(done);
            SubmitResult r = e.submit(new GenerationRequest(e.tokenizer().encode(prompt + (i == 0 ? "" : " " + i)), SamplingParams.greedy(),
                    StopCondition.of(400), 0, -1, 0), new GenerationListener() {
                @Override
                public void onToken(int choice, int tokenId, String text, TokenLogprobs logprobs) {
                    got.incrementAndGet();
                    started.countDown();
                }

                @Override
                public void onChoiceFinished(int choice, FinishReason reason, Usage usage, String message) {
                    done.complete(reason + " " + message);
                }
            });
            assertTrue(r instanceof SubmitResult.Accepted, r.toString());
        }
        assertTrue(started.await(30, TimeUnit.SECONDS), "no tokens");
        int port = nodes.get(1).port();
        String nodeId = nodes.id(1);
        nodes.get(1).process().destroyForcibly(); // SIGKILL: its streams to the coordinator and to its peers just break
        long killed = System.nanoTime();
        for (CompletableFuture<String> done : ends) {
            String end = done.get(STEP.toSeconds() + 5, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - killed) / 1_000_000;
            assertTrue(end.startsWith("ERROR") && end.contains("127.0.0.1:" + port), "ended with: " + end);
            assertTrue(ms < STEP.toMillis() + 1000, "the generation ended " + ms + " ms after the kill (step deadline " + STEP + ")");
        }
        assertTrue(got.get() < 400 * streams, "it stopped at the failure");

        try (AppLauncher back = AppLauncher.start(nodeId + "-restarted", AppLauncher.nodeApp(), Map.of("juno.node.id", nodeId),
                Duration.ofSeconds(90), port)) {
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!executor.get().healthy() && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertTrue(executor.get().healthy(), "the coordinator did not reload the restarted node: " + executor.get().healthMessage());
            assertEquals(want, Greedy.tokens(e, prompt, 16), "after the restart: the survivors reconnected to the new node 1");
        }
    }
}
