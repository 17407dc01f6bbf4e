package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.cluster.ClusterConfig;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.NodeAddress;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EmbeddingOutput;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.coordinator.scheduler.EmbeddingRequest;
import ml.juno.e2e.harness.NodeProcesses;
import ml.juno.model.wire.ActivationDtype;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Embeddings through real node processes: the last pipeline stage (tensor parallel: rank 0) sends the rows' final
 * hidden states with the step's answer and the coordinator pools them. With FLOAT32 activations a pipeline gives the
 * local engine's vectors bit for bit, tensor parallel within the rounding of its partial sums; FLOAT16 activations
 * stay close.
 */
class ClusterEmbeddingsIT {
    static final Path STORIES = ClusterParityIT.STORIES;
    static final List<String> TEXTS = List.of("Once upon a time", "The little dog ran to the park and saw a big red ball", "Tom");

    static NodeProcesses nodes;

    @BeforeAll
    static void startNodes() {
        nodes = NodeProcesses.start("embed-node", 2);
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    static List<float[]> embed(InferenceEngine e) throws Exception {
        EmbeddingOutput out = e.newEmbeddings();
        for (String t : TEXTS) {
            out.submit(new EmbeddingRequest(e.tokenizer().encode(t), e.pooling(), 0));
        }
        return out.await().vectors();
    }

    static List<float[]> local() throws Exception {
        try (InferenceEngine e = EngineAssembly.open(ClusterParityIT.engineConfig(STORIES))) {
            return embed(e);
        }
    }

    static List<float[]> cluster(Parallelism p, ActivationDtype dtype) throws Exception {
        List<NodeAddress> addresses = nodes.addresses(2).stream().map(NodeAddress::parse).toList();
        ClusterConfig cc = new ClusterConfig(addresses, p, new ClusterConfig.Wire(dtype, ByteOrder.LITTLE_ENDIAN),
                new ClusterConfig.Deadlines(Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(30)), 1);
        EngineConfig ec = ClusterParityIT.engineConfig(STORIES);
        try (InferenceEngine e = EngineAssembly.open(ec, ClusterExecutor.factory(cc, ec))) {
            return embed(e);
        }
    }

    static double maxDifference(List<float[]> a, List<float[]> b) {
        assertEquals(a.size(), b.size());
        double worst = 0;
        for (int i = 0; i < a.size(); i++) {
            assertEquals(a.get(i).length, b.get(i).length);
            for (int k = 0; k < a.get(i).length; k++) {
                worst = Math.max(worst, Math.abs(a.get(i)[k] - b.get(i)[k]));
            }
        }
        return worst;
    }

    @Test
    void pipelineAndTensorParallel_giveTheLocalEmbeddings() throws Exception {
        List<float[]> want = local();
        List<float[]> pipeline = cluster(Parallelism.PIPELINE, ActivationDtype.FLOAT32);
        assertEquals(0.0, maxDifference(want, pipeline), "pipeline over 2 nodes, FLOAT32");
        double tensor = maxDifference(want, cluster(Parallelism.TENSOR, ActivationDtype.FLOAT32));
        assertTrue(tensor < 1e-5, "tensor parallel over 2 nodes, FLOAT32: " + tensor);
        double half = maxDifference(want, cluster(Parallelism.PIPELINE, ActivationDtype.FLOAT16));
        assertTrue(half < 2e-3, "pipeline over 2 nodes, FLOAT16: " + half);
        System.out.printf("cluster embeddings: tensor FLOAT32 max difference %.3g, pipeline FLOAT16 %.3g%n", tensor, half);
        List<float[]> distinct = new ArrayList<>(want);
        assertTrue(maxDifference(distinct.subList(0, 1), distinct.subList(2, 3)) > 0, "two texts gave one vector");
    }
}
