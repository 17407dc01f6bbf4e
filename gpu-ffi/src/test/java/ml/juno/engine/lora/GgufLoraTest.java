package ml.juno.engine.lora;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.quantize.GgufStreamWriter;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** llama.cpp's GGUF LoRA format: what Juno writes reads back equal; fused bases; bad adapters refused. */
class GgufLoraTest {
    @TempDir
    Path dir;

    /** Every pair's dense delta {@code scale·B·A} agrees within {@code tol} (relative to the largest entry). */
    private static void assertSameDeltas(LoraAdapter want, LoraAdapter got, float tol) {
        assertEquals(want.header().targets(), got.header().targets());
        for (LoraPair w : want.pairs()) {
            LoraPair g = got.pair(w.layer(), w.target());
            assertNotNull(g, "pair " + w.layer() + " " + w.target());
            float[] dw = want.delta(w);
            float[] dg = got.delta(g);
            float max = 0;
            for (float v : dw) {
                max = Math.max(max, Math.abs(v));
            }
            for (int i = 0; i < dw.length; i++) {
                assertEquals(dw[i], dg[i], tol * max, "delta of " + w.layer() + " " + w.target() + " at " + i);
            }
        }
        assertEquals(want.pairs().size(), got.pairs().size());
    }

    @Test
    void ggufLoraWrittenByJuno_readsBackEqual() throws Exception {
        try (GgufFile base = GgufFile.open(LoraFixtures.model("stories260K.gguf"))) {
            LoraAdapter a = LoraFixtures.random(base, List.of(Projection.values()), 4, 8f, false, 1, 0.1f);
            Path gguf = dir.resolve("a.gguf");
            GgufLora.write(gguf, a);
            try (GgufFile f = GgufFile.open(gguf)) {
                assertEquals("adapter", f.metadata().getString(GgufKeys.GENERAL_TYPE));
                assertEquals("lora", f.metadata().getString(GgufKeys.ADAPTER_TYPE));
                assertEquals("llama", f.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE));
                assertEquals(8f, f.metadata().getFloat(GgufKeys.ADAPTER_LORA_ALPHA));
                var ta = f.tensor("blk.0.attn_q.weight.lora_a");
                var tb = f.tensor("blk.0.attn_q.weight.lora_b");
                assertEquals(List.of(64L, 4L), List.of(ta.dim(0), ta.dim(1)), "lora_a is [in, rank]");
                assertEquals(List.of(4L, 64L), List.of(tb.dim(0), tb.dim(1)), "lora_b is [rank, out]");
            }
            LoraAdapter back = LoraAdapters.load(gguf, base);
            assertEquals(a.header().base(), back.header().base());
            assertEquals(a.header().alpha(), back.header().alpha());
            assertEquals(a.header().rank(), back.header().rank());
            for (LoraPair p : a.pairs()) {
                LoraPair q = back.pair(p.layer(), p.target());
                assertTrue(java.util.Arrays.equals(p.a(), q.a()) && java.util.Arrays.equals(p.b(), q.b()),
                        "pair " + p.layer() + " " + p.target() + " bit for bit");
            }
            Path lora = dir.resolve("back.lora");
            LoraFile.write(lora, back);
            assertSameDeltas(a, LoraFile.read(lora), 0f);
        }
    }

    @Test
    void rsLoraAndFusedPhi3Tensors_roundTripToTheSameDeltas() throws Exception {
        try (GgufFile base = GgufFile.open(LoraFixtures.model("tiny-phi3-random-F16.gguf"))) {
            assertTrue(BaseFingerprint.of(base).fusedQkv() && BaseFingerprint.of(base).fusedGateUp());
            LoraAdapter a = LoraFixtures.random(base, List.of(Projection.Q, Projection.V, Projection.GATE, Projection.UP,
                    Projection.DOWN), 4, 6f, true, 2, 0.1f);
            Path gguf = dir.resolve("phi3.gguf");
            GgufLora.write(gguf, a);
            try (GgufFile f = GgufFile.open(gguf)) {
                assertTrue(f.findTensor("blk.0.attn_qkv.weight.lora_a").isPresent(), "Q and V fused into attn_qkv");
                assertTrue(f.findTensor("blk.0.attn_q.weight.lora_a").isEmpty());
                assertEquals(8L, f.tensor("blk.0.attn_qkv.weight.lora_a").dim(1), "two distinct A's of rank 4 stacked");
                assertTrue(f.findTensor("blk.0.ffn_up.weight.lora_b").isPresent(), "gate and up fused into ffn_up");
            }
            LoraAdapter back = LoraAdapters.load(gguf, base);
            assertEquals(java.util.EnumSet.of(Projection.Q, Projection.V, Projection.GATE, Projection.UP, Projection.DOWN),
                    back.header().targets(), "K has no rows of its own in the fused pair: not a target");
            for (LoraPair p : back.pairs()) {
                assertEquals(4, p.rank(), "the zero columns of another projection's A are dropped");
            }
            assertSameDeltas(a, back, 1e-6f);
        }
    }

    @Test
    void notAnAdapter_wrongArchitecture_orHalfAPair_isRefused() throws Exception {
        Path llamaAdapter = dir.resolve("llama.gguf");
        try (GgufFile base = GgufFile.open(LoraFixtures.model("stories260K.gguf"))) {
            GgufLora.write(llamaAdapter, LoraFixtures.random(base, List.of(Projection.Q), 2, 2f, false, 3, 0.1f));
            IOException e = assertThrows(IOException.class, () -> LoraAdapters.load(LoraFixtures.model("stories260K.gguf"), base));
            assertTrue(e.getMessage().contains("not 'adapter'"), e.getMessage());
            Path half = dir.resolve("half.gguf");
            try (GgufStreamWriter w = GgufStreamWriter.create(half, List.of(
                    GgufStreamWriter.Entry.string(GgufKeys.GENERAL_ARCHITECTURE, "llama"),
                    GgufStreamWriter.Entry.string(GgufKeys.GENERAL_TYPE, "adapter"),
                    GgufStreamWriter.Entry.string(GgufKeys.ADAPTER_TYPE, "lora")),
                    List.of(new GgufStreamWriter.TensorSpec("blk.0.attn_q.weight.lora_a", GgmlType.F32, new long[] {64, 2})))) {
                w.write(w.dataPosition(0), ByteBuffer.allocate(64 * 2 * 4));
            }
            e = assertThrows(IOException.class, () -> LoraAdapters.load(half, base));
            assertTrue(e.getMessage().contains("missing its lora_b"), e.getMessage());
            byte[] bytes = Files.readAllBytes(llamaAdapter);
            Path cut = dir.resolve("cut.gguf");
            Files.write(cut, java.util.Arrays.copyOf(bytes, bytes.length - 100));
            e = assertThrows(IOException.class, () -> LoraAdapters.load(cut, base));
            assertTrue(e.getMessage().contains("not a readable GGUF LoRA"), e.getMessage());
        }
        try (GgufFile qwen = GgufFile.open(LoraFixtures.model("tiny-qwen2-random-F16.gguf"))) {
            IOException e = assertThrows(IOException.class, () -> LoraAdapters.load(llamaAdapter, qwen));
            assertTrue(e.getMessage().contains("architecture 'llama'") && e.getMessage().contains("qwen2"), e.getMessage());
        }
        try (GgufFile otherLlama = GgufFile.open(LoraFixtures.model("tiny-llama-random-F32.gguf"))) {
            IOException e = assertThrows(IOException.class, () -> LoraAdapters.load(llamaAdapter, otherLlama));
            assertTrue(e.getMessage().contains("shapes"), e.getMessage());
        }
    }
}
