package ml.juno.node;

import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.StatusRuntimeException;
import io.quarkus.grpc.GrpcClient;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Multi;
import java.nio.ByteOrder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import ml.juno.engine.EngineInfo;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.cpu.NativeKernels;
import ml.juno.engine.kv.KvPaging;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.ShardSpec;
import ml.juno.model.shm.ControlChannel;
import ml.juno.model.shm.ShmFiles;
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.ProtoMapping;
import ml.juno.node.v1.BlockTable;
import ml.juno.node.v1.KvElement;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.NodeService;
import ml.juno.node.v1.NodeStatus;
import ml.juno.node.v1.PipelineShard;
import ml.juno.node.v1.ReleaseRequest;
import ml.juno.node.v1.ShardInfo;
import ml.juno.node.v1.ShardState;
import ml.juno.node.v1.StatusRequest;
import ml.juno.node.v1.StepBatch;
import ml.juno.node.v1.StepOutput;
import ml.juno.node.v1.StepRequest;
import ml.juno.node.v1.StepResponse;
import ml.juno.node.v1.Tensor;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** One node in process: empty and not ready at first, then loads shards on request and serves steps over gRPC. */
@QuarkusTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeServiceTest {

    static final Path MODEL = Path.of(System.getProperty("juno.models.dir", "../models"), "stories260K.gguf").toAbsolutePath();
    static final int[] PROMPT = {1, 403, 407, 261, 378};
    static final Duration WAIT = Duration.ofSeconds(30);

    @GrpcClient("node")
    NodeService node;

    @Test
    @Order(1)
    void freshNode_isAliveButNotReady() {
        given().when().get("/q/health/live").then().statusCode(200).body("status", equalTo("UP"));
        given().when().get("/q/health/ready").then().statusCode(503)
                .body("checks.find { it.name == 'shard' }.data.state", equalTo("SHARD_STATE_EMPTY"))
                .body("checks.find { it.name == 'shard' }.data.backend", org.hamcrest.Matchers.nullValue()); // no shard, no kernels yet
    }

    @Test
    @Order(2)
    void status_reportsEmptyShardAndCpuBackend() {
        NodeStatus s = node.getStatus(StatusRequest.getDefaultInstance()).await().atMost(WAIT);
        assertEquals(ShardState.SHARD_STATE_EMPTY, s.getState());
        assertFalse(s.getBackend().isEmpty());
        assertFalse(s.hasShard());
        assertEquals(Runtime.getRuntime().availableProcessors(), s.getComputeThreads());
    }

    @Test
    @Order(3)
    void stepWithoutAShard_answersAnErrorNotZeros() {
        StepOutput o = step(batch(0, false));
        assertTrue(o.getError().startsWith("no shard loaded"), o.getError());
        assertFalse(o.hasLogits());
    }

    @Test
    @Order(4)
    void shardThatCannotLoad_isReportedFailedWithTheReason_aPathOutsideTheModelsDirIsRefusedFirst() {
        StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                () -> node.loadShard(load(0, 5).setModelPath("/no/such/model.gguf").build()).await().atMost(WAIT));
        assertEquals("model path '/no/such/model.gguf' is not a readable model file inside this node's models directory",
                e.getStatus().getDescription());
        assertEquals(ShardState.SHARD_STATE_EMPTY, node.getStatus(StatusRequest.getDefaultInstance()).await().atMost(WAIT).getState(),
                "refused before the shard is touched");

        StatusRuntimeException beyond = assertThrows(StatusRuntimeException.class,
                () -> node.loadShard(load(3, 9).build()).await().atMost(WAIT));
        assertTrue(beyond.getStatus().getDescription().contains("layers"), beyond.getStatus().toString());
        NodeStatus s = node.getStatus(StatusRequest.getDefaultInstance()).await().atMost(WAIT);
        assertEquals(ShardState.SHARD_STATE_FAILED, s.getState());
        assertTrue(s.getMessage().contains("layers"), s.getMessage());
        given().when().get("/q/health/ready").then().statusCode(503);
    }

    @Test
    @Order(5)
    void lastStage_returnsTheLogitsOfTheInProcessModel_onlyForRowsThatAsk() throws Exception {
        ShardInfo info = node.loadShard(load(0, 5).build()).await().atMost(WAIT);
        assertTrue(info.getEmbeds());
        assertTrue(info.getProducesLogits());
        assertTrue(info.getWeightBytes() > 0 && info.getKvBytes() > 0);
        given().when().get("/q/health/ready").then().statusCode(200);
        assertEquals(ShardState.SHARD_STATE_READY, node.getStatus(StatusRequest.getDefaultInstance()).await().atMost(WAIT).getState());
        // which kernels compute the shard: the engine's choice on this machine, in the shard info and the health data
        NativeKernels.Loaded l = NativeKernels.load();
        boolean nat = Backends.requestedKind() != Backends.Kind.JAVA && l.ok();
        String kind = nat ? "native" : "java";
        String isa = nat ? l.kernels().isa() : "vector" + EngineInfo.FLOAT_SPECIES.vectorBitSize();
        assertEquals(kind, info.getBackend());
        assertEquals(isa, info.getIsa());
        given().when().get("/q/health/ready").then().statusCode(200)
                .body("checks.find { it.name == 'shard' }.data.backend", equalTo(kind))
                .body("checks.find { it.name == 'shard' }.data.isa", equalTo(isa));

        StepOutput o = step(batch(0, false));
        assertEquals("", o.getError());
        assertEquals(List.of(1, info.getVocab()), o.getLogits().getShapeList());
        float[] got = new float[info.getVocab()];
        ProtoMapping.decode(o.getLogits(), got, 0);
        assertArrayEquals(reference(new ShardSpec(0, 5, 0, 1)), got);

        // the last stage draws the token itself: greedy with log-probabilities, then seeded; no logits come back
        float[] ref = reference(new ShardSpec(0, 5, 0, 1));
        var greedy = new ml.juno.engine.sampling.RowDraw(new ml.juno.engine.sampling.DrawParams(0f, 0, 1f, 0f, 1f, 0f, 0f,
                new int[0], new float[0]), new int[0], 0, new int[0], new long[] {1, 2, 3, 4}, 2);
        StepOutput drawn = step(ProtoMapping.withSamplers(batch(0, false), List.of(greedy)));
        assertEquals("", drawn.getError());
        assertFalse(drawn.hasLogits(), "a row drawn on the node sends no logits");
        assertEquals(1, drawn.getSampledCount());
        int argmax = 0;
        for (int i = 1; i < ref.length; i++) {
            argmax = ref[i] > ref[argmax] ? i : argmax;
        }
        assertEquals(argmax, drawn.getSampled(0).getToken());
        double z = 0;
        for (float v : ref) {
            z += Math.exp(v - ref[argmax]);
        }
        assertEquals(-Math.log(z), drawn.getSampled(0).getLogprob(), 1e-5, "log-probability of the drawn token");
        assertEquals(2, drawn.getSampled(0).getTopIdsCount());
        assertEquals(argmax, drawn.getSampled(0).getTopIds(0));
        // a seeded draw with a hot temperature: the same token as the chain on the reference logits, and the coordinator's
        // share (a row left without a draw) comes back as logits
        var seeded = new ml.juno.engine.sampling.RowDraw(new ml.juno.engine.sampling.DrawParams(1.5f, 20, 0.9f, 0.01f, 1.1f, 0f, 0f,
                new int[] {argmax}, new float[] {-2f}), new int[] {argmax, 3}, 2, new int[0], seedState(7), -1);
        int want = new ml.juno.engine.sampling.SamplingChain(ref.length).draw(ref, 0, seeded).token();
        StepOutput s2 = step(ProtoMapping.withSamplers(batch(0, false), List.of(seeded)));
        assertEquals(want, s2.getSampled(0).getToken());
        assertFalse(s2.getSampled(0).getHasLogprobs());
        StepOutput mixed = step(ProtoMapping.withSamplers(batch(0, false), java.util.Collections.singletonList(null)));
        assertEquals(0, mixed.getSampledCount());
        assertEquals(List.of(1, info.getVocab()), mixed.getLogits().getShapeList(), "a row left to the coordinator: its logits");
        // a sampler naming a token outside the vocabulary fails that row with the reason, not the step
        var bad = new ml.juno.engine.sampling.RowDraw(greedy.params(), new int[0], 0, new int[] {info.getVocab() + 5}, new long[] {1, 2, 3, 4}, -1);
        StepOutput refused = step(ProtoMapping.withSamplers(batch(0, false), List.of(bad)));
        assertEquals(-1, refused.getSampled(0).getToken());
        assertTrue(refused.getSampled(0).getError().contains("outside the vocabulary"), refused.getSampled(0).getError());
    }

    private static long[] seedState(long seed) {
        long[] s = new long[4];
        new ml.juno.engine.sampling.Xoshiro256(seed).state(s);
        return s;
    }

    @Test
    @Order(6)
    void bogusLoadShards_fromAStranger_leaveTheServingShardAlone_andTellNothingAboutOtherPaths() {
        StepOutput before = step(batch(0, false));
        assertEquals("", before.getError());
        String exists = "/etc/passwd";
        String missing = "/etc/no-such-file-" + System.nanoTime();
        String escape = MODEL.getParent().resolve("../../../../../../../etc/passwd").toString();
        for (String path : List.of(exists, missing, escape, "../pom.xml", MODEL.getParent().toString(), "", "stories260K.gguf\0x")) {
            StatusRuntimeException e = assertThrows(StatusRuntimeException.class,
                    () -> node.loadShard(load(0, 5).setModelPath(path).build()).await().atMost(WAIT), path);
            assertEquals(io.grpc.Status.Code.FAILED_PRECONDITION, e.getStatus().getCode(), path);
            String msg = e.getStatus().getDescription();
            assertEquals("is not a readable model file inside this node's models directory", msg.substring(msg.indexOf("' ") + 2), path + ": " + msg);
        }
        assertEquals(ShardState.SHARD_STATE_READY, node.getStatus(StatusRequest.getDefaultInstance()).await().atMost(WAIT).getState());
        StepOutput after = step(batch(0, false));
        assertEquals("", after.getError());
        assertEquals(before.getLogits(), after.getLogits(), "the shard kept serving, unchanged");
        // a relative path inside the models directory is fine
        assertTrue(node.loadShard(load(0, 5).setModelPath("stories260K.gguf").build()).await().atMost(WAIT).getProducesLogits());
    }

    @Test
    @Order(7)
    void firstStage_returnsHiddenStatesInTheChosenDtypeAndOrder() throws Exception {
        ShardInfo info = node.loadShard(load(0, 2).setActivationDtype(ProtoMapping.toProto(ActivationDtype.FLOAT16))
                .setByteOrder(ProtoMapping.toProto(ByteOrder.BIG_ENDIAN)).build()).await().atMost(WAIT);
        assertFalse(info.getProducesLogits());
        StepOutput o = step(batch(0, false));
        assertEquals("", o.getError());
        Tensor a = o.getActivations();
        assertEquals(List.of(PROMPT.length, info.getEmbedding()), a.getShapeList());
        assertEquals(ml.juno.node.v1.ByteOrder.BYTE_ORDER_BIG_ENDIAN, a.getByteOrder());
        assertEquals(2L * PROMPT.length * info.getEmbedding(), a.getData().size());
        float[] got = new float[PROMPT.length * info.getEmbedding()];
        ProtoMapping.decode(a, got, 0);
        float[] want = hidden(new ShardSpec(0, 2, 0, 1), info.getEmbedding());
        for (int i = 0; i < want.length; i++) {
            assertEquals(want[i], got[i], Math.abs(want[i]) * 1e-3 + 1e-4, "value " + i);
        }
        assertFalse(o.hasLogits());
    }

    @Test
    @Order(8)
    void release_dropsTheSlotsBlockTables_soTheirPositionsAreNoLongerCovered() {
        node.loadShard(load(0, 5).build()).await().atMost(WAIT);
        assertEquals("", step(batch(0, true)).getError());
        assertEquals(1, node.release(ReleaseRequest.newBuilder().addSlots(0).addSlots(99).build()).await().atMost(WAIT).getReleased());
        StepOutput o = step(batch(0, false).toBuilder().clearBlockTables().build());
        assertTrue(o.getError().contains("not covered"), o.getError());
    }

    @Test
    @Order(8)
    void shardPlayingALoraAdapter_returnsTheAdaptedLogits_andAMissingAdapterFailsTheLoad() throws Exception {
        // adapters are opened under the node's models directory only, like the model
        Path file = java.nio.file.Files.createTempFile(MODEL.getParent(), ".node-test-", ".lora");
        Path outside = java.nio.file.Files.createTempFile("node-test-outside", ".lora");
        try {
            ml.juno.engine.lora.LoraAdapter a;
            try (GgufFile f = GgufFile.open(MODEL)) {
                var fp = ml.juno.engine.lora.BaseFingerprint.of(f);
                java.util.SplittableRandom rnd = new java.util.SplittableRandom(9);
                List<ml.juno.engine.lora.LoraPair> pairs = new java.util.ArrayList<>();
                for (int l = 0; l < fp.shapes().layers(); l++) {
                    int[] d = ml.juno.engine.lora.LoraPair.dims(ml.juno.engine.model.block.Projection.V, fp.shapes());
                    float[] x = new float[2 * d[0]];
                    float[] y = new float[d[1] * 2];
                    for (int i = 0; i < x.length; i++) {
                        x[i] = (float) rnd.nextDouble(-0.3, 0.3);
                    }
                    for (int i = 0; i < y.length; i++) {
                        y[i] = (float) rnd.nextDouble(-0.3, 0.3);
                    }
                    pairs.add(new ml.juno.engine.lora.LoraPair(l, ml.juno.engine.model.block.Projection.V, 2, d[0], d[1], x, y));
                }
                a = new ml.juno.engine.lora.LoraAdapter(new ml.juno.engine.lora.LoraAdapter.Header(
                        ml.juno.engine.lora.LoraAdapter.FORMAT_VERSION, fp, java.util.EnumSet.of(ml.juno.engine.model.block.Projection.V),
                        2, 2f, false, java.util.Map.of()), pairs);
            }
            ml.juno.engine.lora.LoraFile.write(file, a);
            ml.juno.engine.lora.LoraFile.write(outside, a);
            StatusRuntimeException refused = assertThrows(StatusRuntimeException.class, () -> node.loadShard(load(0, 5)
                    .addLoraPlay(ml.juno.node.v1.LoraPlay.newBuilder().setPath(outside.toString()).setScale(1f)).build())
                    .await().atMost(WAIT));
            assertTrue(refused.getStatus().getDescription().contains("models directory"), refused.getStatus().toString());
            ShardInfo info = node.loadShard(load(0, 5).addLoraPlay(ml.juno.node.v1.LoraPlay.newBuilder()
                    .setPath(file.toString()).setScale(1.5f)).build()).await().atMost(WAIT);
            StepOutput o = step(batch(0, false));
            assertEquals("", o.getError());
            float[] got = new float[info.getVocab()];
            ProtoMapping.decode(o.getLogits(), got, 0);
            float[] want;
            try (GgufFile f = GgufFile.open(MODEL);
                 Model m = Model.load(f, new EngineOptions(1, 64, KvType.F32, 16, 2), new ShardSpec(0, 5, 0, 1), Backends::select);
                 InferenceSession s = m.newPagedSession(new KvPaging(16, 8))) {
                ml.juno.engine.lora.LoraPlan.apply(m, List.of(new ml.juno.engine.lora.LoraPlan.Played(a, 1.5f, 0)));
                s.setBlockTable(0, new int[] {0, 1}, 2);
                var b = new ml.juno.engine.step.StepBatch.Builder(16);
                b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, true);
                want = s.forward(b.build()).copyRow(0);
            }
            assertArrayEquals(want, got);
            assertFalse(java.util.Arrays.equals(reference(new ShardSpec(0, 5, 0, 1)), got), "the adapter changes the logits");

            StatusRuntimeException e = assertThrows(StatusRuntimeException.class, () -> node.loadShard(load(0, 5)
                    .addLoraPlay(ml.juno.node.v1.LoraPlay.newBuilder().setPath("/no/such/adapter.lora").setScale(1f)).build())
                    .await().atMost(WAIT));
            assertTrue(e.getStatus().getDescription().contains("/no/such/adapter.lora"), e.getStatus().toString());
        } finally {
            java.nio.file.Files.deleteIfExists(file);
            java.nio.file.Files.deleteIfExists(outside);
        }
    }

    @Test
    @Order(9)
    void aCoordinatorOnThisHost_stepsThroughSharedMemory_withTheAnswersOfTheStream() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(ControlChannel.usable(), "no /dev/shm or futexes here: steps stay on gRPC");
        node.loadShard(load(0, 5).build()).await().atMost(WAIT);
        StepOutput byGrpc = step(batch(0, false));
        assertEquals("", byGrpc.getError());

        // another host's coordinator (or another network namespace's): the node says no, and why
        ControlChannel elsewhere = ControlChannel.create();
        try {
            Stream s = open();
            s.requests.onNext(attach(elsewhere, ShmFiles.HOST + 1));
            StepResponse no = s.next();
            assertFalse(no.getAttached().getAttached());
            assertTrue(no.getAttached().getReason().contains("not on the coordinator's host"), no.toString());
            s.requests.onComplete();
        } finally {
            elsewhere.close();
        }

        ControlChannel c = ControlChannel.create();
        try {
            Stream s = open();
            s.requests.onNext(attach(c, ShmFiles.HOST));
            assertTrue(s.next().getAttached().getAttached(), "a node on this host attaches");
            long deadline = System.nanoTime() + WAIT.toNanos();
            for (long step = 1; step <= 2; step++) { // the same answer as on the stream, through the channel, twice
                c.send(StepRequest.newBuilder().setBatch(batch(step, false)).build().toByteArray(), deadline);
                StepOutput o = StepResponse.parseFrom(c.receive(deadline, () -> false)).getOutput();
                assertEquals(step, o.getStepId());
                assertEquals(byGrpc.getLogits(), o.getLogits(), "the logits of the stream's answer");
            }
            assertTrue(s.answers.isEmpty(), "nothing more on the stream: " + s.answers);

            // a malformed message ends the stream with the reason, and the node leaves the channel
            c.send(new byte[] {(byte) 0xFF, 1, 2}, deadline);
            Object end = s.answers.poll(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(end instanceof Throwable t && String.valueOf(t.getMessage()).contains("malformed step request"), String.valueOf(end));
            assertNull(c.receive(System.nanoTime() + WAIT.toNanos(), () -> false));
            assertTrue(c.peerGone(), "the node left the channel");
        } finally {
            c.close();
        }
    }

    /** A step stream opened by hand: its requests, and its answers (then its failure, if it fails) as they come. */
    private record Stream(io.smallrye.mutiny.operators.multi.processors.UnicastProcessor<StepRequest> requests,
                          java.util.concurrent.BlockingQueue<Object> answers) {
        StepResponse next() throws InterruptedException {
            Object o = answers.poll(WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(o instanceof StepResponse, String.valueOf(o));
            return (StepResponse) o;
        }
    }

    private Stream open() {
        var requests = io.smallrye.mutiny.operators.multi.processors.UnicastProcessor.<StepRequest>create();
        java.util.concurrent.BlockingQueue<Object> answers = new java.util.concurrent.LinkedBlockingQueue<>();
        node.step(requests).subscribe().with(answers::offer, answers::offer);
        return new Stream(requests, answers);
    }

    private static StepRequest attach(ControlChannel c, long host) {
        return StepRequest.newBuilder().setAttach(ml.juno.node.v1.ControlAttach.newBuilder().setName(c.name()).setHost(host)).build();
    }

    private StepOutput step(StepBatch b) {
        List<StepResponse> r = node.step(Multi.createFrom().item(StepRequest.newBuilder().setBatch(b).build()))
                .collect().asList().await().atMost(WAIT);
        assertEquals(1, r.size());
        return r.get(0).getOutput();
    }

    static LoadShardRequest.Builder load(int first, int end) {
        return LoadShardRequest.newBuilder().setModelPath(MODEL.toString())
                .setPipeline(PipelineShard.newBuilder().setFirstLayer(first).setEndLayer(end))
                .setActivationDtype(ProtoMapping.toProto(ActivationDtype.FLOAT32))
                .setByteOrder(ProtoMapping.toProto(ByteOrder.LITTLE_ENDIAN))
                .setContextLength(64).setMaxSequences(2).setMaxBatchTokens(16)
                .setKvBlockSize(16).setKvBlocks(8).setKvElement(KvElement.KV_ELEMENT_F32).setThreads(1);
    }

    /** The prompt in slot 0 at blocks 2, 5 (not 0: the ids are the coordinator's). */
    static StepBatch batch(long step, boolean unused) {
        StepBatch.Builder b = StepBatch.newBuilder().setStepId(step)
                .addBlockTables(BlockTable.newBuilder().setSlot(0).addBlocks(2).addBlocks(5));
        for (int i = 0; i < PROMPT.length; i++) {
            b.addSlots(0).addPositions(i).addTokenIds(PROMPT[i]).addNeedsLogits(i == PROMPT.length - 1);
        }
        return b.build();
    }

    private static float[] reference(ShardSpec spec) throws Exception {
        try (GgufFile f = GgufFile.open(MODEL);
             Model m = Model.load(f, new EngineOptions(1, 64, KvType.F32, 16, 2), spec, Backends::select);
             InferenceSession s = m.newPagedSession(new KvPaging(16, 8))) {
            s.setBlockTable(0, new int[] {0, 1}, 2);
            var b = new ml.juno.engine.step.StepBatch.Builder(16);
            b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, true);
            return s.forward(b.build()).copyRow(0);
        }
    }

    private static float[] hidden(ShardSpec spec, int dim) throws Exception {
        try (GgufFile f = GgufFile.open(MODEL);
             Model m = Model.load(f, new EngineOptions(1, 64, KvType.F32, 16, 2), spec, Backends::select);
             InferenceSession s = m.newPagedSession(new KvPaging(16, 8))) {
            s.setBlockTable(0, new int[] {0, 1}, 2);
            var b = new ml.juno.engine.step.StepBatch.Builder(16);
            b.addPrompt(0, 0, PROMPT, 0, PROMPT.length, false);
            assertNull(s.forward(b.build()));
            return java.util.Arrays.copyOf(s.hiddenStates(), PROMPT.length * dim);
        }
    }
}
