package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.ClusterStats;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.ExecutorFactory;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.e2e.harness.Greedy;
import ml.juno.e2e.harness.NodeProcesses;
import ml.juno.e2e.harness.PeerClusters;
import ml.juno.engine.kv.KvType;
import org.junit.jupiter.api.Test;

/**
 * A three-stage pipeline of real node processes passes each step's rows stage to stage and the last node draws the
 * tokens: what the coordinator sends and receives per step is the batch and the tokens, while the stages' own counters
 * show the rows they sent each other; the tokens are the local engine's. The middle stage killed in the middle of a
 * generation ends it with an error naming that node within the step deadline (the last stage, waiting for its rows,
 * does not hang; two generations at once, their steps in flight in the stages together, both end so), and once the node is back on its port the coordinator reloads it and the stages, reconnected, give
 * the local tokens again.
 */
class PipelinePeersIT {
    static final java.nio.file.Path STORIES = ClusterParityIT.STORIES;
    static final String PROMPT = "Once upon a time";

    @Test
    void stagesPassRowsNodeToNode_andTheMiddleStageDyingFailsTheGenerationInBoundedTime_thenTheClusterServesAgain() throws Exception {
        EngineConfig ec = EngineConfig.defaults(STORIES).withContextLength(512).withKvType(KvType.F32).withMaxSequences(2).withThreads(1);
        List<Integer> want;
        try (InferenceEngine local = EngineAssembly.open(ec)) {
            want = Greedy.tokens(local, PROMPT, 16);
        }
        try (NodeProcesses nodes = NodeProcesses.start("stages-node", 3)) {
            AtomicReference<ClusterExecutor> executor = new AtomicReference<>();
            ExecutorFactory f = PeerClusters.capturing(nodes, 3, Parallelism.PIPELINE, ec, executor);
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

                // kill the middle stage while two long generations run, their steps in flight in the stages at once
                ClusterStats beforeKill = executor.get().stats();
                PeerClusters.killNode1ThenRestart(e, nodes, executor, PROMPT, want, 2);
                assertTrue(executor.get().stats().minus(beforeKill).overlapped() > 0, "two steps were in flight at once");
            }
        }
    }
}
