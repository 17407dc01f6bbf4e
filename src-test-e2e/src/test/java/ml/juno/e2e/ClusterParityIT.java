package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import ml.juno.coordinator.cluster.ClusterConfig;
import ml.juno.coordinator.cluster.ClusterExecutor;
import ml.juno.coordinator.cluster.NodeAddress;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.coordinator.engine.EngineAssembly;
import ml.juno.coordinator.engine.EngineConfig;
import ml.juno.coordinator.engine.InferenceEngine;
import ml.juno.e2e.harness.Greedy;
import ml.juno.e2e.harness.NodeProcesses;
import ml.juno.engine.kv.KvType;
import ml.juno.model.wire.ActivationDtype;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's engine with a {@link ClusterExecutor} over real node processes (real gRPC, real ports) gives the
 * local engine's greedy tokens: pipeline over 1, 2 and 3 nodes, tensor parallel over 2, 3 (uneven) and 4 (the ranks all-reducing with each other), with FLOAT32
 * activations; FLOAT16 and INT8 report how often their tokens agree. Four nodes are started once; every
 * configuration only reloads shards on them.
 */
class ClusterParityIT {
    static final Path MODELS = Path.of(System.getProperty("juno.models.dir", "../models"));
    static final Path STORIES = MODELS.resolve("stories260K.gguf").toAbsolutePath();
    static final Path TINY_LLAMA = MODELS.resolve("testdata/tiny-random/tiny-llama-random-F16.gguf").toAbsolutePath();
    static final List<String> PROMPTS = List.of("Once upon a time", "The little dog", "Tom and Lily went to the park");
    static final int TOKENS = 24;
    static final int TP_PROMPTS = 2; // tensor parallel pays one rank-to-rank exchange per all-reduce: keep it short
    static final int TP_TOKENS = 12;

    static NodeProcesses nodes;

    @BeforeAll
    static void startNodes() {
        nodes = NodeProcesses.start("parity-node", 4);
    }

    @AfterAll
    static void stopNodes() {
        if (nodes != null) {
            nodes.close();
        }
    }

    static EngineConfig engineConfig(Path model) {
        return EngineConfig.defaults(model).withContextLength(128).withKvType(KvType.F32).withMaxSequences(2).withThreads(1);
    }

    static List<List<Integer>> local(Path model) throws Exception {
        return local(model, PROMPTS.size(), TOKENS);
    }

    static List<List<Integer>> local(Path model, int prompts, int tokens) throws Exception {
        try (InferenceEngine e = EngineAssembly.open(engineConfig(model))) {
            return generateAll(e, prompts, tokens);
        }
    }

    static List<List<Integer>> cluster(Path model, Parallelism p, int n, ActivationDtype dtype, ByteOrder order) throws Exception {
        return cluster(model, p, n, dtype, order, PROMPTS.size(), TOKENS);
    }

    static List<List<Integer>> cluster(Path model, Parallelism p, int n, ActivationDtype dtype, ByteOrder order, int prompts,
                                       int tokens) throws Exception {
        List<NodeAddress> addresses = nodes.addresses(n).stream().map(NodeAddress::parse).toList();
        ClusterConfig cc = new ClusterConfig(addresses, p, new ClusterConfig.Wire(dtype, order),
                new ClusterConfig.Deadlines(Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(30)), 1);
        EngineConfig ec = engineConfig(model);
        try (InferenceEngine e = EngineAssembly.open(ec, ClusterExecutor.factory(cc, ec))) {
            return generateAll(e, prompts, tokens);
        }
    }

    static List<List<Integer>> generateAll(InferenceEngine e, int prompts, int tokens) throws Exception {
        List<List<Integer>> out = new java.util.ArrayList<>();
        for (String prompt : PROMPTS.subList(0, prompts)) {
            out.add(Greedy.tokens(e, prompt, tokens));
        }
        return out;
    }

    @Test
    void pipelineOverOneTwoAndThreeNodes_givesTheLocalGreedyTokens() throws Exception {
        List<List<Integer>> stories = local(STORIES);
        for (int n = 1; n <= 3; n++) {
            assertEquals(stories, cluster(STORIES, Parallelism.PIPELINE, n, ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                    "stories260K, pipeline over " + n + " nodes");
        }
        List<List<Integer>> tiny = local(TINY_LLAMA);
        for (int n = 1; n <= 2; n++) { // two layers: at most two stages
            assertEquals(tiny, cluster(TINY_LLAMA, Parallelism.PIPELINE, n, ActivationDtype.FLOAT32, ByteOrder.BIG_ENDIAN),
                    "tiny llama, pipeline over " + n + " nodes (big-endian wire)");
        }
    }

    @Test
    void tensorParallelOverTwoThreeAndFourNodes_givesTheLocalGreedyTokens() throws Exception {
        for (Path model : List.of(TINY_LLAMA, STORIES)) {
            List<List<Integer>> want = local(model, TP_PROMPTS, TP_TOKENS);
            for (int n : new int[] {2, 4}) {
                assertEquals(want, cluster(model, Parallelism.TENSOR, n, ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN, TP_PROMPTS, TP_TOKENS),
                        model.getFileName() + ", tensor parallel over " + n + " nodes");
            }
        }
        // the default 3 nodes on the bundled model: 4 KV heads split 2/1/1 (query heads 4/2/2), the FFN in whole blocks
        assertEquals(local(STORIES, TP_PROMPTS, TP_TOKENS),
                cluster(STORIES, Parallelism.TENSOR, 3, ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN, TP_PROMPTS, TP_TOKENS),
                "stories260K, tensor parallel over 3 nodes (uneven)");
    }

    /** Greedy tokens of the first two prompts with the played adapter, then with named adapter 1 on top. */
    static List<List<Integer>> withLora(InferenceEngine e) throws Exception {
        List<List<Integer>> out = new java.util.ArrayList<>();
        for (String prompt : PROMPTS.subList(0, 2)) {
            out.add(Greedy.tokens(e, prompt, TP_TOKENS, 0));
            out.add(Greedy.tokens(e, prompt, TP_TOKENS, 1));
        }
        return out;
    }

    @Test
    void loraPlayedAndNamed_overPipelineAndTensorClusters_givesTheLocalGreedyTokens() throws Exception {
        // adapters live in the nodes' models directory, like the model
        Path play = java.nio.file.Files.createTempFile(MODELS, ".parity-play-", ".lora");
        Path named = java.nio.file.Files.createTempFile(MODELS, ".parity-named-", ".lora");
        try {
            ml.juno.e2e.harness.RandomLora.write(play, STORIES, 11);
            ml.juno.e2e.harness.RandomLora.write(named, STORIES, 12);
            var lora = new ml.juno.coordinator.engine.EngineLora(List.of(new ml.juno.engine.lora.LoraAdapters.Spec(play, 0.8f)),
                    List.of(new ml.juno.engine.lora.LoraAdapters.Module("tuned", named)));
            EngineConfig ec = engineConfig(STORIES);
            List<List<Integer>> want;
            try (InferenceEngine e = EngineAssembly.open(ec, lora)) {
                want = withLora(e);
            }
            assertNotEquals(local(STORIES, 2, TP_TOKENS), List.of(want.get(0), want.get(2)), "the played adapter changes the tokens");
            for (Parallelism p : List.of(Parallelism.PIPELINE, Parallelism.TENSOR)) {
                List<NodeAddress> addresses = nodes.addresses(2).stream().map(NodeAddress::parse).toList();
                ClusterConfig cc = new ClusterConfig(addresses, p, new ClusterConfig.Wire(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                        new ClusterConfig.Deadlines(Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(30)), 1);
                try (InferenceEngine e = EngineAssembly.open(ec, ClusterExecutor.factory(cc, ec, lora), lora)) {
                    assertEquals(want, withLora(e), "stories260K with LoRA, " + p + " over 2 nodes");
                }
            }
        } finally {
            java.nio.file.Files.deleteIfExists(play);
            java.nio.file.Files.deleteIfExists(named);
        }
    }

    @Test
    void adapterPlayedByTheNodesThemselves_givesTheLocalPlayedTokens() throws Exception {
        // juno node --lora-play: the coordinator knows nothing of the adapter; each tensor rank plays its slice
        Path play = java.nio.file.Files.createTempFile(MODELS, ".parity-nodeplay-", ".lora");
        try {
            ml.juno.e2e.harness.RandomLora.write(play, STORIES, 13);
            var lora = new ml.juno.coordinator.engine.EngineLora(List.of(new ml.juno.engine.lora.LoraAdapters.Spec(play, 0.5f)), List.of());
            EngineConfig ec = engineConfig(STORIES);
            List<List<Integer>> want;
            try (InferenceEngine e = EngineAssembly.open(ec, lora)) {
                want = generateAll(e, TP_PROMPTS, TP_TOKENS);
            }
            assertNotEquals(local(STORIES, TP_PROMPTS, TP_TOKENS), want, "the played adapter changes the tokens");
            try (NodeProcesses playing = NodeProcesses.start("nodeplay", 2, java.util.Map.of("juno.node.lora-play", play + ":0.5"))) {
                List<NodeAddress> addresses = playing.addresses(2).stream().map(NodeAddress::parse).toList();
                ClusterConfig cc = new ClusterConfig(addresses, Parallelism.TENSOR, new ClusterConfig.Wire(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                        new ClusterConfig.Deadlines(Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(30)), 1);
                try (InferenceEngine e = EngineAssembly.open(ec, ClusterExecutor.factory(cc, ec))) {
                    assertEquals(want, generateAll(e, TP_PROMPTS, TP_TOKENS), "stories260K, adapter played by 2 tensor-parallel nodes");
                }
            }
        } finally {
            java.nio.file.Files.deleteIfExists(play);
        }
    }

    @Test
    void float16AndInt8Activations_reportTheirTop1Agreement() throws Exception {
        List<List<Integer>> want = local(STORIES);
        for (Parallelism p : Parallelism.values()) {
            for (ActivationDtype d : new ActivationDtype[] {ActivationDtype.FLOAT16, ActivationDtype.INT8}) {
                List<List<Integer>> got = cluster(STORIES, p, 2, d, ByteOrder.LITTLE_ENDIAN);
                int same = 0;
                int prefix = 0;
                for (int k = 0; k < want.size(); k++) {
                    boolean diverged = false;
                    for (int i = 0; i < TOKENS; i++) {
                        boolean eq = want.get(k).get(i).equals(got.get(k).get(i));
                        same += eq ? 1 : 0;
                        diverged |= !eq;
                        prefix += diverged ? 0 : 1;
                    }
                }
                int total = want.size() * TOKENS;
                System.out.printf("[agreement] stories260K %s-2 %s: %d/%d greedy tokens equal the local engine's (%.0f%%), "
                        + "%d/%d before the first divergence%n", p.name().toLowerCase(), d, same, total, 100.0 * same / total, prefix, total);
                assertTrue(prefix >= want.size(), p + " " + d + ": even the first token of each prompt differs");
            }
        }
    }

    /** Seeded, penalized and biased settings, one with log-probabilities: what the last node must draw as the coordinator would. */
    static final List<ml.juno.coordinator.sampling.SamplingParams> DRAWS = List.of(
            ml.juno.coordinator.sampling.SamplingParams.defaults(42),
            new ml.juno.coordinator.sampling.SamplingParams(1.1f, new ml.juno.coordinator.sampling.Truncation(30, 0.9f, 0.02f),
                    new ml.juno.coordinator.sampling.RepetitionPenalties(1.2f, 0.1f, 0.3f, 32),
                    ml.juno.coordinator.sampling.LogitBias.of(java.util.Map.of(13, 2f, 29, Float.NEGATIVE_INFINITY)), 7),
            ml.juno.coordinator.sampling.SamplingParams.greedy());

    /** Each setting's tokens and log-probabilities (3 alternatives) for the first prompt, one request after the other. */
    static List<String> drawn(InferenceEngine e) throws Exception {
        return drawn(e, false);
    }

    /** {@link #drawn(InferenceEngine)}, all requests submitted at once when {@code together} (several sequences per step). */
    static List<String> drawn(InferenceEngine e, boolean together) throws Exception {
        List<String> out = new java.util.ArrayList<>();
        List<java.util.concurrent.CompletableFuture<String>> ends = new java.util.ArrayList<>();
        List<StringBuilder> texts = new java.util.ArrayList<>();
        for (var params : DRAWS) {
            StringBuilder sb = new StringBuilder();
            var done = new java.util.concurrent.CompletableFuture<String>();
            int[] ids = e.tokenizer().encode(PROMPTS.getFirst());
            var r = e.submit(new ml.juno.coordinator.scheduler.GenerationRequest(ids, params,
                    ml.juno.coordinator.sampling.StopCondition.of(TOKENS), 0, 3), new ml.juno.coordinator.engine.GenerationListener() {
                @Override
                public void onToken(int choice, int tokenId, String text, ml.juno.coordinator.sampling.TokenLogprobs lp) {
                    sb.append(lp).append(' ');
                }

                @Override
                public void onChoiceFinished(int choice, ml.juno.coordinator.sampling.FinishReason reason,
                                             ml.juno.coordinator.scheduler.Usage usage, String message) {
                    done.complete(reason + " " + message);
                }
            });
            assertTrue(r instanceof ml.juno.coordinator.scheduler.SubmitResult.Accepted, r.toString());
            ends.add(done);
            texts.add(sb);
            if (!together) {
                done.get(60, java.util.concurrent.TimeUnit.SECONDS);
            }
        }
        for (int i = 0; i < ends.size(); i++) {
            String end = ends.get(i).get(60, java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(!end.startsWith("ERROR"), end);
            out.add(texts.get(i).toString());
        }
        return out;
    }

    /** The draws through a pipeline of {@code n} nodes, with what crossed the wire. */
    static List<String> drawnThroughPipeline(int n, java.util.concurrent.atomic.AtomicReference<ml.juno.coordinator.cluster.ClusterStats> stats)
            throws Exception {
        return drawnThroughPipeline(n, stats, false);
    }

    static List<String> drawnThroughPipeline(int n, java.util.concurrent.atomic.AtomicReference<ml.juno.coordinator.cluster.ClusterStats> stats,
                                             boolean together) throws Exception {
        List<NodeAddress> addresses = nodes.addresses(n).stream().map(NodeAddress::parse).toList();
        ClusterConfig cc = new ClusterConfig(addresses, Parallelism.PIPELINE, new ClusterConfig.Wire(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN),
                new ClusterConfig.Deadlines(Duration.ofSeconds(20), Duration.ofSeconds(30), Duration.ofSeconds(5), Duration.ofSeconds(30)), 1);
        EngineConfig ec = engineConfig(STORIES);
        var executor = new java.util.concurrent.atomic.AtomicReference<ClusterExecutor>();
        ml.juno.coordinator.engine.ExecutorFactory f = (file, m, context, blocks) -> {
            ClusterExecutor ex = (ClusterExecutor) ClusterExecutor.factory(cc, ec).open(file, m, context, blocks);
            executor.set(ex);
            return ex;
        };
        try (InferenceEngine e = EngineAssembly.open(ec, f)) {
            List<String> got = drawn(e, together);
            stats.set(executor.get().stats());
            return got;
        }
    }

    @Test
    void seededPenalizedAndLogprobDraws_byTheLastNodeOfTwoAndThreeStagePipelines_equalTheLocalOnes_andNoLogitsCrossTheWire() throws Exception {
        List<String> want;
        try (InferenceEngine e = EngineAssembly.open(engineConfig(STORIES))) {
            want = drawn(e);
        }
        assertNotEquals(want.get(0), want.get(2), "the seeded run samples (differs from greedy)");
        int vocab = 512; // stories260K
        int dim = 64;
        var stats = new java.util.concurrent.atomic.AtomicReference<ml.juno.coordinator.cluster.ClusterStats>();
        for (int n = 2; n <= 3; n++) {
            assertEquals(want, drawnThroughPipeline(n, stats), "pipeline over " + n + " nodes, node to node, the last node drawing");
            var s = stats.get();
            System.out.printf("[pipeline-%d node-to-node] %d steps: coordinator %.0f B/token (sent %d, received %d), stage to stage %.0f B/token, "
                    + "%.3f ms per hop beyond compute%n", n, s.steps(), s.coordinatorBytesPerToken(), s.bytesSent(), s.bytesReceived(),
                    s.peerBytesPerToken(), s.overheadMillisPerHop());
            assertTrue(s.bytesReceived() < s.steps() * (long) vocab * Float.BYTES / 2,
                    "the coordinator receives tokens (and 3 log-probabilities), not a row of logits per step: " + s);
            assertTrue(s.peerBytes() >= (n - 1) * s.tokens() * (long) dim * Float.BYTES,
                    "every stage but the last sent each step's rows to the next itself: " + s);
            // one step at a time, so the stages' computing never overlaps: it fits in the steps' wall time (a stage's
            // compute counted until its answer, after its rows had left, overlapped the next stage's and came out larger)
            assertEquals(0, s.overlapped(), "one sequence at a time: " + s);
            assertTrue(s.computeNanos() <= s.hopNanos(), "the stages' compute within the steps' time: " + s);
        }
        // the three settings at once (two running, one waiting for a slot): two steps of different sequences in flight,
        // stage 0 computing one while stage 1 computes the other, each sequence's draws those of one step at a time
        assertEquals(want, drawnThroughPipeline(2, stats, true), "pipeline over 2 nodes, three sequences at once, two steps in flight");
        assertTrue(stats.get().overlapped() > TOKENS, "steps were sent while an earlier one was still in the stages: " + stats.get());
        // two sequences per step, each step split into two micro-batches that follow each other through the stages
        // (one step at a time: steps in flight would give each step one sequence)
        System.setProperty("juno.cluster.micro-batches", "2");
        System.setProperty("juno.cluster.steps-in-flight", "1");
        try {
            assertEquals(want, drawnThroughPipeline(3, stats, true), "pipeline over 3 nodes, two sequences at once in two micro-batches");
            assertTrue(stats.get().steps() < 3 * TOKENS, "steps carried several sequences (one at a time takes " + 3 * TOKENS + "): " + stats.get());
            assertEquals(0, stats.get().overlapped(), "one step at a time: " + stats.get());
        } finally {
            System.clearProperty("juno.cluster.micro-batches");
            System.clearProperty("juno.cluster.steps-in-flight");
        }
        // the old path (hidden states and logits through the coordinator) gives the same, and costs more on the wire
        System.setProperty("juno.cluster.hub", "true");
        try {
            var before = new java.util.concurrent.atomic.AtomicReference<ml.juno.coordinator.cluster.ClusterStats>();
            assertEquals(want, drawnThroughPipeline(2, before), "pipeline over 2 nodes through the coordinator");
            var b = before.get();
            System.out.printf("[pipeline-2 through the coordinator] %d steps: coordinator %.0f B/token (sent %d, received %d), %.3f ms per hop beyond compute%n",
                    b.steps(), b.coordinatorBytesPerToken(), b.bytesSent(), b.bytesReceived(), b.overheadMillisPerHop());
            assertEquals(0, b.peerBytes(), "no stage-to-stage traffic on the old path");
            assertTrue(b.bytesReceived() >= b.steps() * (long) vocab * Float.BYTES, "the old path returns every step's logits: " + b);
        } finally {
            System.clearProperty("juno.cluster.hub");
        }
    }
}
