package ml.juno.model.wire;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteOrder;
import java.util.List;
import ml.juno.engine.step.SlotBlocks;
import ml.juno.engine.step.StepBatch;
import ml.juno.engine.step.StepRows;
import ml.juno.model.shard.LayerRange;
import ml.juno.model.shard.ShardAssignment;
import ml.juno.model.shard.ShardLoad;
import ml.juno.model.shard.ShardPhase;
import ml.juno.model.shard.ShardSummary;
import ml.juno.node.v1.LoadShardRequest;
import ml.juno.node.v1.Tensor;
import ml.juno.node.v1.TensorDtype;
import org.junit.jupiter.api.Test;

class ProtoMappingTest {

    @Test
    void tensor_carriesDtypeOrderAndShape_andDecodesToTheSameFloats() {
        float[] x = {1.5f, -2.25f, 3f, 0f, 7.125f, -0.5f};
        for (ByteOrder o : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
            Tensor t = ProtoMapping.encode(ActivationCodec.of(ActivationDtype.FLOAT32, o), x, 0, 2, 3);
            assertEquals(TensorDtype.TENSOR_DTYPE_FLOAT32, t.getDtype());
            assertEquals(List.of(2, 3), t.getShapeList());
            assertEquals(24, t.getData().size());
            float[] back = new float[8];
            ProtoMapping.decode(t, back, 2);
            assertArrayEquals(x, java.util.Arrays.copyOfRange(back, 2, 8));
        }
    }

    @Test
    void stepBatch_roundTripsThroughTheWire_andAStageThatTakesActivationsGetsNoTokens() {
        StepBatch b = new StepBatch(7, new StepRows(new int[] {0, 0, 1}, new int[] {4, 5, 9}, new int[] {11, 12, 13},
                new boolean[] {false, true, true}), List.of(new SlotBlocks(0, new int[] {3}), new SlotBlocks(1, new int[] {2, 6})));
        assertEquals(b, ProtoMapping.fromProto(ProtoMapping.toProto(b)));
        Tensor h = ProtoMapping.encode(ActivationCodec.of(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN), new float[6], 0, 3, 2);
        var staged = ProtoMapping.toProto(b, h);
        assertEquals(0, staged.getTokenIdsCount());
        assertEquals(h, staged.getActivations());
        assertEquals(b.withoutTokens(), ProtoMapping.fromProto(staged));
        assertEquals(2, b.rows().logitRows());
    }

    @Test
    void stepBatch_isValidatedOnce_atTheBoundary_withTheStepInTheMessage() {
        var wire = ProtoMapping.toProto(new StepBatch(3, new StepRows(new int[] {0}, new int[] {0}, new int[] {1},
                new boolean[] {true}), List.of()));
        var bad = List.of(
                wire.toBuilder().addPositions(1).build(),                                        // columns disagree
                wire.toBuilder().addTokenIds(2).build(),                                         // two tokens, one row
                wire.toBuilder().setPositions(0, -1).build(),                                    // negative position
                wire.toBuilder().addBlockTables(ml.juno.node.v1.BlockTable.newBuilder().setSlot(0))
                        .addBlockTables(ml.juno.node.v1.BlockTable.newBuilder().setSlot(0)).build(), // one slot twice
                wire.toBuilder().clearSlots().clearPositions().clearNeedsLogits().clearTokenIds().build()); // no rows
        for (var w : bad) {
            var e = assertThrows(IllegalArgumentException.class, () -> ProtoMapping.fromProto(w));
            assertEquals(true, e.getMessage().startsWith("step 3: "), e.getMessage());
        }
    }

    @Test
    void stepRowsWithLoraAdapters_roundTrip_andRowsWithoutThemSendNone() {
        var rows = new ml.juno.engine.step.StepRows(new int[] {0, 1, 2}, new int[] {0, 0, 5}, new int[] {7, 8, 9},
                new boolean[] {true, false, true}, new int[] {2, 0, 1});
        var b = new ml.juno.engine.step.StepBatch(4, rows, List.of());
        var wire = ProtoMapping.toProto(b);
        assertEquals(List.of(2, 0, 1), wire.getAdaptersList());
        assertEquals(b, ProtoMapping.fromProto(wire));
        assertEquals(List.of(2, 0, 1), ProtoMapping.toProto(b.withoutTokens(), Tensor.getDefaultInstance()).getAdaptersList(),
                "later pipeline stages get the adapters too");
        var plain = new ml.juno.engine.step.StepBatch(5, new ml.juno.engine.step.StepRows(new int[] {0}, new int[] {0}, new int[] {7},
                new boolean[] {true}), List.of());
        assertEquals(0, ProtoMapping.toProto(plain).getAdaptersCount());
        assertThrows(IllegalArgumentException.class, () -> new ml.juno.engine.step.StepRows(new int[] {0, 1}, new int[] {0, 0},
                new int[] {1, 2}, new boolean[] {true, true}, new int[] {1}));
    }

    @Test
    void rowsAskingForFinalHiddenStates_roundTrip_andTheHiddenStatesTravelBesideTheLogits() {
        var rows = new StepRows(new int[] {0, 0, 1}, new int[] {0, 1, 0}, new int[] {7, 8, 9}, new boolean[] {false, false, true},
                new int[0], new boolean[] {true, true, false});
        var b = new StepBatch(4, rows, List.of());
        var wire = ProtoMapping.toProto(b);
        assertEquals(List.of(true, true, false), wire.getNeedsHiddenList());
        assertEquals(b, ProtoMapping.fromProto(wire));
        assertEquals(0, ProtoMapping.toProto(b.withoutLogits()).getNeedsHiddenCount(), "a rank without the head is asked for none");
        assertEquals(0, ProtoMapping.toProto(new StepBatch(4, new StepRows(new int[] {0}, new int[] {0}, new int[] {7},
                new boolean[] {true}), List.of())).getNeedsHiddenCount(), "generation sends no column");
        float[] h = {0.5f, -1f, 2f, 3f};
        Activations hidden = Activations.encode(ActivationCodec.of(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN), h, 0, 2, 2);
        Activations logits = Activations.encode(ActivationCodec.of(ActivationDtype.FLOAT32, ByteOrder.LITTLE_ENDIAN), h, 0, 1, 4);
        var out = ProtoMapping.toProto(new ShardOutput(4, null, logits, null, 10, 0, 0, 0, hidden));
        assertEquals(List.of(2, 2), out.getHidden().getShapeList());
        float[] back = new float[4];
        ProtoMapping.decode(out.getHidden(), back, 0);
        assertArrayEquals(h, back);
        assertThrows(IllegalArgumentException.class, () -> new ShardOutput(4, null, null, "broken", 0, 0, 0, 0, hidden));
    }

    @Test
    void decode_refusesAShapeThatDisagreesWithTheBytes() {
        Tensor t = ProtoMapping.encode(ActivationCodec.of(ActivationDtype.FLOAT16, ByteOrder.BIG_ENDIAN), new float[6], 0, 2, 3);
        Tensor lying = t.toBuilder().setShape(1, 4).build();
        assertThrows(IllegalArgumentException.class, () -> ProtoMapping.decode(lying, new float[8], 0));
        Tensor noDtype = t.toBuilder().setDtype(TensorDtype.TENSOR_DTYPE_UNSPECIFIED).build();
        assertThrows(IllegalArgumentException.class, () -> ProtoMapping.decode(noDtype, new float[6], 0));
    }

    @Test
    void activations_roundTripThroughATensor_andAShardOutputKeepsWhatItCarries() {
        float[] x = {1f, -2f, 3.5f, 4f, 0.25f, -6f};
        Activations a = Activations.encode(ActivationCodec.of(ActivationDtype.INT8, ByteOrder.BIG_ENDIAN), x, 0, 2, 3);
        Tensor t = ProtoMapping.toProto(a);
        assertEquals(List.of(2, 3), t.getShapeList());
        assertEquals(TensorDtype.TENSOR_DTYPE_INT8, t.getDtype());
        assertEquals(a, ProtoMapping.fromProto(t));
        assertThrows(IllegalArgumentException.class, () -> new Activations(ActivationDtype.FLOAT16, ByteOrder.BIG_ENDIAN, 2, 3, new byte[11]));

        var ok = ProtoMapping.toProto(new ShardOutput(9, null, a, null, 1234, 44, 5678, 9000));
        assertEquals(9, ok.getStepId());
        assertEquals("", ok.getError());
        assertEquals(false, ok.hasActivations());
        assertEquals(t, ok.getLogits());
        assertEquals(1234, ok.getComputeNanos());
        assertEquals(List.of(44L, 5678L, 9000L), List.of((long) ok.getReductions(), ok.getReduceNanos(), ok.getPeerBytesSent()));
        var failed = ProtoMapping.toProto(ShardOutput.failed(9, "broken"));
        assertEquals("broken", failed.getError());
        assertEquals(false, failed.hasLogits() || failed.hasActivations());
        assertThrows(IllegalArgumentException.class, () -> new ShardOutput(9, a, null, "broken", 0, 0, 0, 0));
    }

    @Test
    void partition_roundTripsPipelineAndTensorAssignments() {
        ShardAssignment p = new ShardAssignment(new LayerRange(2, 5), 0, 1);
        assertEquals(p, ProtoMapping.partition(ProtoMapping.partition(LoadShardRequest.newBuilder(), p).build(), 5));
        ShardAssignment t = ShardAssignment.tensor(5, 4).get(3);
        assertEquals(t, ProtoMapping.partition(ProtoMapping.partition(LoadShardRequest.newBuilder(), t).build(), 5));
    }

    @Test
    void loadRequest_mapsToAShardLoad_andASummaryMapsBackToShardInfo() {
        var b = ProtoMapping.partition(LoadShardRequest.newBuilder(), ShardAssignment.tensor(5, 2).get(1));
        b.getTensorBuilder().addPeers("10.0.0.1:9000").addPeers("10.0.0.2:9000").setGroup(77).setReduceTimeoutMillis(4000);
        var wire = b
                .setModelPath("/m.gguf").setActivationDtype(TensorDtype.TENSOR_DTYPE_INT8)
                .setByteOrder(ml.juno.node.v1.ByteOrder.BYTE_ORDER_BIG_ENDIAN).setContextLength(64).setMaxSequences(2)
                .setMaxBatchTokens(16).setKvBlockSize(16).setKvBlocks(8)
                .setKvElement(ml.juno.node.v1.KvElement.KV_ELEMENT_F16).setThreads(3).build();
        ShardLoad l = ProtoMapping.fromProto(wire);
        assertEquals(new ShardLoad("/m.gguf", new ShardLoad.Tensor(1, 2, List.of("10.0.0.1:9000", "10.0.0.2:9000"), 77, 4000), ActivationDtype.INT8, ByteOrder.BIG_ENDIAN, 64, 2,
                16, 16, 8, ml.juno.engine.kv.KvType.F16, 3, java.util.List.of(), java.util.List.of()), l);
        assertEquals(ShardAssignment.tensor(5, 2).get(1), l.partition().assignment(5));
        assertThrows(IllegalArgumentException.class,
                () -> ProtoMapping.fromProto(wire.toBuilder().setActivationDtype(TensorDtype.TENSOR_DTYPE_UNSPECIFIED).build()));
        assertEquals(null, ((ShardLoad.Tensor) l.partition()).peersProblem());
        var noPeers = ProtoMapping.fromProto(wire.toBuilder().setTensor(wire.getTensor().toBuilder().clearPeers()).build());
        assertEquals("tensor rank 1 of 2 needs the addresses of all 2 ranks (peers), got 0", ((ShardLoad.Tensor) noPeers.partition()).peersProblem());

        var summary = new ShardSummary("n1", l.partition().assignment(5), 5, true, false, 64, 512, 100, 200, 300, 400,
                "native", "avx2", 7);
        var info = ProtoMapping.toProto(summary);
        assertEquals(List.of(0, 5, 5, 1, 2), List.of(info.getFirstLayer(), info.getEndLayer(), info.getModelLayers(),
                info.getTensorRank(), info.getWorldSize()));
        assertEquals("n1 true false 64 512 100 200 300 400 native avx2 7", info.getNodeId() + " " + info.getEmbeds() + " "
                + info.getProducesLogits() + " " + info.getEmbedding() + " " + info.getVocab() + " " + info.getWeightBytes() + " "
                + info.getKvBytes() + " " + info.getMemoryUsedBytes() + " " + info.getMemoryFreeBytes() + " "
                + info.getBackend() + " " + info.getIsa() + " " + info.getLoadMillis());
        assertEquals("tensor slice 1/2 of 5 layers", summary.describe());
        assertEquals(ml.juno.node.v1.ShardState.SHARD_STATE_READY, ProtoMapping.toProto(ShardPhase.READY));
    }

    @Test
    void pipelineAssignments_coverEveryLayerOnceInOrder() {
        List<ShardAssignment> s = ShardAssignment.pipeline(new long[] {10, 10, 10, 10, 10}, 3);
        assertEquals(3, s.size());
        assertEquals(0, s.get(0).layers().start());
        assertEquals(5, s.get(2).layers().end());
        assertEquals(s.get(0).layers().end(), s.get(1).layers().start());
        assertEquals(s.get(1).layers().end(), s.get(2).layers().start());
    }

    @Test
    void byteOrder_parsesBothNamesAndRefusesOthers() {
        assertEquals(ByteOrder.BIG_ENDIAN, ProtoMapping.parseByteOrder("big_endian"));
        assertEquals(ByteOrder.LITTLE_ENDIAN, ProtoMapping.parseByteOrder("LITTLE_ENDIAN"));
        assertThrows(IllegalArgumentException.class, () -> ProtoMapping.parseByteOrder("middle"));
    }
}
