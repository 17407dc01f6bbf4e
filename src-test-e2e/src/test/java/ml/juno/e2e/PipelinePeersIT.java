package ml.juno.e2e;

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
import ml.juno.coordinator.cluster.ClusterStats;
import ml.juno.coordinator.cluster.NodeAddress;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EngineAssembly;
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
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.Greedy;
import ml.juno.e2e.harness.NodeProcesses;
import ml.juno.engine.kv.KvType;
import ml.juno.model.wire.ActivationDtype;
import org.junit.jupiter.api.Test;

/**
 * A three-stage pipeline of real node processes passes each step's rows stage to stage and the last node draws the
 * tokens: what the coordinator sends and receives per step is the batch and the tokens, while the stages' own counters
 * show the rows they sent each other; the tokens are the local engine's. The middle stage killed in the middle of a
 * generation ends it with an error naming that node within the step deadline (the last stage, waiting for its rows,
 * does not hang), and once the node is back on its port the coordinator reloads it and the stages, reconnected, give
 * the local tokens again.
 */
class PipelinePeersIT {
    static final java.nio.file.Path STORIES = ClusterParityIT.STORIES;
    static final String PROMPT = "Once upon a time";
    static final Duration STEP = Duration.ofSeconds(5);

    @Test
    void stagesPassRowsNodeToNode_andTheMiddleStageDyingFailsTheGenerationInBoundedTime_thenTheClusterServesAgain() throws Exception {
        EngineConfig ec = EngineConfig.defaults(STORIES).withContextLength(512).withKvType(KvType.F32).withMaxSequences(2).withThreads(1);
        List<Integer> want;
        try (InferenceEngine local = EngineAssembly.open(ec)) {
            want = Greedy.tokens(local, PROMPT, 16);
        }
        try (NodeProcesses nodes = NodeProcesses.start("stages-node", 3)) {
            List<NodeAddress> addresses = nodes.addresses(3).stream().map(NodeAddress::parse).toList();
            ClusterConfig cc = new ClusterConfig(addresses, Parallelism.PIPELINE, new ClusterConfig.Wire(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                    new ClusterConfig.Deadlines(STEP, Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(30)), 1);
            AtomicReference<ClusterExecutor> executor = new AtomicReference<>();
            ExecutorFactory f = (file, m, context, blocks) -> {
                ClusterExecutor ex = (ClusterExecutor) ClusterExecutor.factory(cc, ec).open(file, m, context, blocks);
                executor.set(ex);
                return ex;
            };
            try (InferenceEngine e = EngineAssembly.open(ec, f)) {
                int vocab = e.tokenizer().size();
                ClusterStats before = executor.get().stats();
                assertEquals(want, Greedy.tokens(e, PROMPT, 16), "pipeline-3 over real nodes");
                ClusterStats s = executor.get().stats().minus(before);
                System.out.printf("[stages] %d steps: coordinator %.0f B/token (sent %d, received %d), stages to each other %.0f B/token%n",
                        s.steps(), s.coordinatorBytesPerToken(), s.bytesSent(), s.bytesReceived(), s.peerBytesPerToken());
                int dim = 64; // stories260K's embedding
                assertTrue(s.peerBytes() >= 2L * s.tokens() * dim * Float.BYTES, "stages 0 and 1 sent every row to the next stage: " + s);
                assertTrue(s.bytesReceived() <= s.steps() * 3 * 64L, "the coordinator receives a token and two short answers per step: " + s);
                assertTrue(s.bytesReceived() < s.steps() * (long) vocab * Float.BYTES / 8, "no logits: " + s);

                // kill the middle stage while a long generation runs
                AtomicInteger got = new AtomicInteger();
                CountDownLatch started = new CountDownLatch(4);
                CompletableFuture<String> done = new CompletableFuture<>();
                SubmitResult r = e.submit(new GenerationRequest(e.tokenizer().encode(PROMPT), SamplingParams.greedy(), StopCondition.of(400), 0, -1, 0),
                        new GenerationListener() {
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
                assertTrue(started.await(30, TimeUnit.SECONDS), "no tokens");
                int port = nodes.get(1).port();
                nodes.get(1).process().destroyForcibly(); // SIGKILL: its streams to the coordinator and to the last stage just break
                long killed = System.nanoTime();
                String end = done.get(STEP.toSeconds() + 5, TimeUnit.SECONDS);
                long ms = (System.nanoTime() - killed) / 1_000_000;
                assertTrue(end.startsWith("ERROR") && end.contains("127.0.0.1:" + port), "ended with: " + end);
                assertTrue(ms < STEP.toMillis() + 1000, "the generation ended " + ms + " ms after the kill (step deadline " + STEP + ")");
                assertTrue(got.get() < 400, "it stopped at the failure");

                try (AppLauncher back = AppLauncher.start("stages-node-1-restarted", AppLauncher.nodeApp(), Map.of("juno.node.id", "stages-node-1"),
                        Duration.ofSeconds(90), port)) {
                    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                    while (!executor.get().healthy() && System.nanoTime() < deadline) {
                        Thread.sleep(100);
                    }
                    assertTrue(executor.get().healthy(), "the coordinator did not reload the restarted stage: " + executor.get().healthMessage());
                    assertEquals(want, Greedy.tokens(e, PROMPT, 16), "pipeline-3 after the restart: stage 0 reconnected to the new stage 1");
                }
            }
        }
    }
}
