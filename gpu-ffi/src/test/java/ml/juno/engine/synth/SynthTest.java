package ml.juno.engine.synth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.gguf.TestModels;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.model.EngineOptions;
import ml.juno.engine.model.GenerationResult;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.TopLogit;
import ml.juno.engine.quant.Dequantize;
import ml.juno.engine.quantize.ProgressListener;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Synthetic models on reduced shapes, read back with the project's GGUF reader. */
class SynthTest {
    /** A tinyllama-like shape, small enough to write in well under a second. */
    private static final SynthPreset TINY = new SynthPreset("tiny-test", 512, 256, 3, 4, 2, 512, 256, 10000f, 1e-5f);

    @TempDir
    Path tmp;

    @Test
    void synth_q4KM_hasLlamaTensorsShapesAndMixTypes() throws IOException {
        Path out = tmp.resolve("m.gguf");
        Synth.SynthReport report = Synth.run(new SynthOptions(TINY, "Q4_K_M", out, 1, null, 2), ProgressListener.NONE);
        try (GgufFile f = GgufFile.open(out)) {
            assertEquals(2 + 1 + 9 * 3, f.tensors().size());
            assertEquals(report.tensorCount(), f.tensors().size());
            assertEquals(GgmlType.Q6_K, f.tensor("output.weight").type());
            assertArrayEquals(new long[] {256, 512}, f.tensor("output.weight").shape());
            assertEquals(GgmlType.Q4_K, f.tensor("token_embd.weight").type());
            assertEquals(GgmlType.F32, f.tensor("output_norm.weight").type());
            assertArrayEquals(new long[] {256, 128}, f.tensor("blk.0.attn_k.weight").shape());   // 2 kv heads x 64
            assertArrayEquals(new long[] {512, 256}, f.tensor("blk.2.ffn_down.weight").shape());
            assertArrayEquals(new long[] {256, 512}, f.tensor("blk.2.ffn_gate.weight").shape());
            assertEquals(GgmlType.F32, f.tensor("blk.1.ffn_norm.weight").type());
            // use_more_bits(i, 3): layers 0 (i >= 7*3/8 = 2 is also true for 2) -> ffn_down 0 and 2 get Q6_K
            assertEquals(GgmlType.Q6_K, f.tensor("blk.2.ffn_down.weight").type());
            assertEquals(GgmlType.Q4_K, f.tensor("blk.1.ffn_down.weight").type());

            var md = f.metadata();
            assertEquals("llama", md.getString(GgufKeys.GENERAL_ARCHITECTURE));
            assertEquals(3, md.getInt("llama.block_count"));
            assertEquals(256, md.getInt("llama.embedding_length"));
            assertEquals(512, md.getInt("llama.feed_forward_length"));
            assertEquals(4, md.getInt("llama.attention.head_count"));
            assertEquals(2, md.getInt("llama.attention.head_count_kv"));
            assertEquals(64, md.getInt("llama.rope.dimension_count"));
            assertEquals(256, md.getInt("llama.context_length"));
            assertEquals(10000f, md.getFloat("llama.rope.freq_base"));
            assertEquals(1e-5f, md.getFloat("llama.attention.layer_norm_rms_epsilon"));
            assertEquals(15, md.getInt(GgufKeys.GENERAL_FILE_TYPE));
            assertEquals(2, md.getInt(GgufKeys.GENERAL_QUANTIZATION_VERSION));
            List<String> tokens = md.getStringArray(GgufKeys.TOKENIZER_LIST);
            assertEquals(512, tokens.size());
            assertEquals("<0x41>", tokens.get(3 + 0x41));
            assertEquals("llama", md.getString(GgufKeys.TOKENIZER_MODEL));
        }
    }

    /** The synthetic file is a model the engine can load and run (stands in for "loads in llama.cpp"). */
    @Test
    void synth_loadsAndGeneratesInTheEngine() throws IOException {
        Path out = tmp.resolve("m.gguf");
        Synth.run(new SynthOptions(TINY, "Q8_0", out, 5, null, 2), ProgressListener.NONE);
        try (GgufFile f = GgufFile.open(out);
             Model m = Model.load(f, new EngineOptions(1, 64, KvType.F32, 8, 1), Backends::select);
             InferenceSession s = m.newSession()) {
            assertEquals(512, m.config().dims().vocab());
            GenerationResult r = s.generate(new int[] {1, 300, 301}, 3, 4);
            assertEquals(3, r.tokens().length);
            for (TopLogit[] step : r.topLogits()) {
                for (TopLogit t : step) {
                    assertTrue(Float.isFinite(t.logit()) && t.token() >= 0 && t.token() < 512, t.toString());
                }
            }
        }
    }

    @Test
    void synth_weightsAreScaledByFanInAndNormsNearOne() throws IOException {
        Path out = tmp.resolve("m.gguf");
        Synth.run(new SynthOptions(TINY, "F32", out, 3, null, 1), ProgressListener.NONE);
        try (GgufFile f = GgufFile.open(out)) {
            float[] q = Dequantize.tensor(f, f.tensor("blk.0.attn_q.weight"));
            assertEquals(1 / Math.sqrt(256), std(q), 0.05 / Math.sqrt(256));
            assertEquals(0, mean(q), 0.01);
            float[] down = Dequantize.tensor(f, f.tensor("blk.0.ffn_down.weight"));
            assertEquals(1 / Math.sqrt(512), std(down), 0.05 / Math.sqrt(512));
            float[] norm = Dequantize.tensor(f, f.tensor("blk.0.attn_norm.weight"));
            assertEquals(1, mean(norm), 0.005);
            assertTrue(std(norm) > 0.005 && std(norm) < 0.02, "norm spread " + std(norm));
        }
    }

    @Test
    void synth_sameSeed_sameFileWhateverTheThreads_otherSeedDiffers() throws IOException {
        Path a = tmp.resolve("a.gguf");
        Path b = tmp.resolve("b.gguf");
        Path c = tmp.resolve("c.gguf");
        Synth.run(new SynthOptions(TINY, "Q8_0", a, 9, null, 1), ProgressListener.NONE);
        Synth.run(new SynthOptions(TINY, "Q8_0", b, 9, null, 3), ProgressListener.NONE);
        Synth.run(new SynthOptions(TINY, "Q8_0", c, 10, null, 2), ProgressListener.NONE);
        assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b));
        assertTrue(Files.mismatch(a, c) >= 0, "another seed gives other weights");
    }

    @Test
    void synth_vocabFrom_copiesTheSentencePieceVocabulary() throws IOException {
        Path vocab = TestModels.testdata().resolve("vocab").resolve("ggml-vocab-llama-spm.gguf");
        Path out = tmp.resolve("m.gguf");
        SynthPreset small = new SynthPreset("small", 32000, 64, 1, 2, 1, 64, 128, 10000f, 1e-5f);
        Synth.SynthReport report = Synth.run(new SynthOptions(small, "Q8_0", out, 1, vocab, 2), ProgressListener.NONE);
        assertEquals(32000, report.preset().vocabSize());
        try (GgufFile v = GgufFile.open(vocab); GgufFile f = GgufFile.open(out)) {
            for (String key : v.metadata().keys()) {
                if (key.startsWith("tokenizer.")) {
                    assertEquals(v.metadata().getRaw(key), f.metadata().getRaw(key), key);
                }
            }
            GgufTensorInfo embd = f.tensor("token_embd.weight");
            assertArrayEquals(new long[] {64, 32000}, embd.shape());
            assertEquals(GgmlType.Q8_0, embd.type());
            assertEquals(GgmlType.Q8_0, f.tensor("output.weight").type());
        }
    }

    @Test
    void presets_haveTheRealShapes() {
        SynthPreset t = SynthPreset.named("TinyLlama-1.1B");
        assertEquals(List.of(32000, 2048, 22, 32, 4, 5632, 2048), List.of(t.vocabSize(), t.dim(), t.layers(), t.heads(),
                t.kvHeads(), t.ffn(), t.contextLength()));
        SynthPreset l = SynthPreset.named("llama-7b");
        assertEquals(List.of(32000, 4096, 32, 32, 32, 11008, 4096), List.of(l.vocabSize(), l.dim(), l.layers(), l.heads(),
                l.kvHeads(), l.ffn(), l.contextLength()));
        assertEquals(256, t.kvDim());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SynthPreset.named("gpt-5"));
        assertTrue(e.getMessage().contains("tinyllama-1.1b"), e.getMessage());
    }

    @Test
    void synth_vocabFileWithoutTokens_isAClearError() {
        Path noVocab = TestModels.testdata().resolve("tiny-random").resolve("tiny-llama-random-Q8_0.gguf");
        Path notGguf = TestModels.testdata().resolve("SOURCES.md");
        assertThrows(IOException.class, () -> Synth.run(
                new SynthOptions(TINY, "Q8_0", tmp.resolve("x.gguf"), 1, notGguf, 1), ProgressListener.NONE));
        // the tiny-llama file has a vocabulary; a bad type is refused before anything is written
        assertThrows(IllegalArgumentException.class, () -> Synth.run(
                new SynthOptions(TINY, "Q9_9", tmp.resolve("y.gguf"), 1, noVocab, 1), ProgressListener.NONE));
        assertTrue(!Files.exists(tmp.resolve("y.gguf")));
    }

    private static double mean(float[] x) {
        double s = 0;
        for (float v : x) {
            s += v;
        }
        return s / x.length;
    }

    private static double std(float[] x) {
        double m = mean(x);
        double s = 0;
        for (float v : x) {
            s += (v - m) * (v - m);
        }
        return Math.sqrt(s / x.length);
    }
}
