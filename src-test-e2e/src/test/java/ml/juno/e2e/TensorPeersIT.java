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
 * Tensor-parallel ranks as real node processes reduce with each other, not through the coordinator: what the
 * coordinator sends and receives per step is the batch and the logits (far less than one all-reduce's partials), while
 * the ranks' own counters show the partials they sent each other; the tokens are the local engine's. A rank killed in
 * the middle of a generation ends it with an error naming that node within the step deadline, and once the node is back
 * on its port the coordinator reloads it and the ranks, reconnected, give the local tokens again.
 */
class TensorPeersIT {
    static final java.nio.file.Path STORIES = ClusterParityIT.STORIES;
    static final String PROMPT = "Once upon a time";

    @Test
    void ranksReduceNodeToNode_andARankThatDiesFailsTheGenerationInBoundedTime_thenTheClusterServesAgain() throws Exception {
        EngineConfig ec = EngineConfig.defaults(STORIES).withContextLength(512).withKvType(KvType.F32).withMaxSequences(2).withThreads(1);
        List<Integer> want;
        try (InferenceEngine local = EngineAssembly.open(ec)) {
            want = Greedy.tokens(local, PROMPT, 16);
        }
        try (NodeProcesses nodes = NodeProcesses.start("peers-node", 2)) {
            AtomicReference<ClusterExecutor> executor = new AtomicReference<>();
            ExecutorFactory f = PeerClusters.capturing(nodes, 2, Parallelism.TENSOR, ec, executor);
            try (InferenceEngine e = EngineAssembly.open(ec, f)) {
                int vocab = e.tokenizer().size();
                ClusterStats before = executor.get().stats();
                assertEquals(want, Greedy.tokens(e, PROMPT, 16), "tensor-2 over real nodes");
                ClusterStats s = executor.get().stats().minus(before);
                System.out.printf("[peers] %d steps, %d all-reduces: coordinator %.0f B/token (sent %d, received %d), ranks to each other %.0f B/token, "
                        + "%.3f ms per all-reduce%n", s.steps(), s.reductions(), s.coordinatorBytesPerToken(), s.bytesSent(), s.bytesReceived(),
                        s.peerBytesPerToken(), s.millisPerReduction());
                int dim = 64; // stories260K's embedding
                assertTrue(s.reductions() >= 2L * 5 * s.steps(), "two all-reduces per layer per step: " + s);
                assertTrue(s.peerBytes() >= s.reductions() * 2L * dim * Float.BYTES, "each rank sent each all-reduce's partial to its peer: " + s);
                // one all-reduce of partials through the coordinator would be >= 2 x 256 B each way, 10 per step
                assertTrue(s.bytesReceived() <= s.steps() * (vocab * (long) Float.BYTES + 2 * 128L), "the coordinator receives logits and two short answers: " + s);
                assertTrue(s.bytesSent() <= s.steps() * 2 * 200L, "the coordinator sends each rank the batch only: " + s);

                // kill rank 1 while a long generation runs
                PeerClusters.killNode1ThenRestart(e, nodes, executor, PROMPT, want);
            }
        }
    }
}
