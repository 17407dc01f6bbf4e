package ml.juno.engine.quantize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.quant.Dequantize;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Whole-file quantization against the files llama-quantize made (SOURCES.md section 5): same tensors in the same
 * order with the same types and the same data bytes; and, because the metadata is carried over the way
 * llama.cpp does it, the same file.
 */
class ModelQuantizerTest {

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "{0} pure={1} -> {2}")
    @CsvSource({
        "Q4_K_M, false, Q4_K_M",
        "Q8_0, false, Q8_0",
        "F16, false, F16",
        "Q4_0, true, Q4_0-pure",
        "Q2_K, true, Q2_K-pure",
        "Q3_K_S, true, Q3_K-pure",
        "Q4_K_S, true, Q4_K-pure",
        "Q5_K_S, true, Q5_K-pure",
        "Q6_K, true, Q6_K-pure",
    })
    void quantize_tinyLlama_reproducesLlamaQuantize(String type, boolean pure, String expected) throws IOException {
        Path out = tmp.resolve("out.gguf");
        QuantizeReport report = ModelQuantizer.run(
                new QuantizeOptions(QuantFixtures.tinyF32(), out, type, pure, List.of(), 2), ProgressListener.NONE);
        assertSameTensors(QuantFixtures.tinyRandom(expected), out);
        assertEquals(QuantType.parse(type), report.fileType());
        assertArrayEquals(Files.readAllBytes(QuantFixtures.tinyRandom(expected)), Files.readAllBytes(out),
                "whole file differs from llama-quantize's");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Q8_0", "Q4_0"})
    void quantize_stories260K_pureWithF16FfnDown_reproducesLlamaQuantize(String type) throws IOException {
        Path out = tmp.resolve("out.gguf");
        QuantizeReport report = ModelQuantizer.run(new QuantizeOptions(QuantFixtures.stories(""), out, type, true,
                List.of("ffn_down=f16"), 1), ProgressListener.NONE);
        assertSameTensors(QuantFixtures.stories(type), out);
        assertEquals(5, report.tensors().stream().filter(t -> t.to() == GgmlType.F16).count());
        assertArrayEquals(Files.readAllBytes(QuantFixtures.stories(type)), Files.readAllBytes(out));
    }

    @Test
    void quantize_stories260K_toF16_reproducesLlamaQuantize() throws IOException {
        Path out = tmp.resolve("out.gguf");
        ModelQuantizer.run(new QuantizeOptions(QuantFixtures.stories(""), out, "f16", false, List.of(), 0), ProgressListener.NONE);
        assertSameTensors(QuantFixtures.stories("F16"), out);
        assertArrayEquals(Files.readAllBytes(QuantFixtures.stories("F16")), Files.readAllBytes(out));
    }

    /** Tensor list, types, shapes, data bytes and the two quantization keys. */
    private static void assertSameTensors(Path expected, Path actual) {
        try (GgufFile e = QuantFixtures.open(expected); GgufFile a = QuantFixtures.open(actual)) {
            assertEquals(e.tensors().stream().map(GgufTensorInfo::name).toList(),
                    a.tensors().stream().map(GgufTensorInfo::name).toList(), "tensor order");
            for (GgufTensorInfo te : e.tensors()) {
                GgufTensorInfo ta = a.tensor(te.name());
                assertEquals(te.type(), ta.type(), te.name());
                assertArrayEquals(te.shape(), ta.shape(), te.name());
                assertArrayEquals(QuantFixtures.bytes(e, te), QuantFixtures.bytes(a, ta), te.name() + " data");
            }
            assertEquals(e.metadata().getLong(GgufKeys.GENERAL_FILE_TYPE), a.metadata().getLong(GgufKeys.GENERAL_FILE_TYPE));
            assertEquals(2, a.metadata().getLong(GgufKeys.GENERAL_QUANTIZATION_VERSION));
        }
    }

    /**
     * The other architectures' Q4_K_M files were made by llama-quantize from F32 masters that are not shipped, so
     * quantizing their F16 files cannot match byte for byte; but the per-tensor choices must (tied embeddings in
     * gemma3, fused attn_qkv in phi3, 3-D expert tensors in qwen3moe, biases and q/k norms in qwen2/qwen3), the
     * tensor order too, and the values must stay close.
     */
    @ParameterizedTest
    @ValueSource(strings = {"gemma3", "phi3", "qwen2", "qwen3", "qwen3moe"})
    void quantize_otherArchitecturesFromF16_chooseLlamaQuantizesTypes(String arch) throws IOException {
        Path dir = QuantFixtures.tinyF32().getParent();
        Path out = tmp.resolve("out.gguf");
        ModelQuantizer.run(new QuantizeOptions(dir.resolve("tiny-" + arch + "-random-F16.gguf"), out, "Q4_K_M", false,
                List.of(), 2), ProgressListener.NONE);
        try (GgufFile e = QuantFixtures.open(dir.resolve("tiny-" + arch + "-random-Q4_K_M.gguf"));
             GgufFile a = QuantFixtures.open(out)) {
            assertEquals(e.tensors().stream().map(t -> t.name() + ":" + t.type()).toList(),
                    a.tensors().stream().map(t -> t.name() + ":" + t.type()).toList());
            assertEquals(List.copyOf(e.metadata().keys()), List.copyOf(a.metadata().keys()));
            for (GgufTensorInfo t : e.tensors()) {
                double rel = QuantFixtures.relativeRmse(Dequantize.tensor(e, t), Dequantize.tensor(a, a.tensor(t.name())));
                assertTrue(rel < 0.05, t.name() + " differs by " + rel);
            }
        }
    }

    /**
     * Types with no shipped counterpart: quantize the file, dequantize every tensor, and compare with the source.
     * The bound is the RMS error relative to the RMS value, a little above what uniform rounding gives for the
     * format's step on Gaussian weights (4-bit ≈ 0.09, 5-bit ≈ 0.045, bf16 ≈ 0.0015).
     */
    @ParameterizedTest
    @CsvSource({"Q4_1, 3, 0.12", "Q5_0, 8, 0.07", "Q5_1, 9, 0.06", "BF16, 32, 0.003", "Q5_K_M, 17, 0.06"})
    void quantize_typesWithoutReference_roundTripCloseToSource(String type, int fileType, double maxRelRmse) throws IOException {
        Path out = tmp.resolve("out.gguf");
        ModelQuantizer.run(new QuantizeOptions(QuantFixtures.tinyF32(), out, type, false, List.of(), 2), ProgressListener.NONE);
        try (GgufFile src = QuantFixtures.open(QuantFixtures.tinyF32()); GgufFile q = QuantFixtures.open(out)) {
            assertEquals(fileType, q.metadata().getInt(GgufKeys.GENERAL_FILE_TYPE));
            for (GgufTensorInfo t : q.tensors()) {
                float[] x = QuantFixtures.f32(src, src.tensor(t.name()));
                float[] back = Dequantize.tensor(q, t);
                double rel = QuantFixtures.relativeRmse(x, back);
                assertTrue(rel < maxRelRmse, t.name() + " (" + t.type() + ") relative rmse " + rel);
                assertTrue(t.type() == GgmlType.F32 || rel > 0, t.name() + " was not quantized");
            }
        }
    }

    @Test
    void quantize_unknownType_namesTheKnownOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelQuantizer.run(
                new QuantizeOptions(QuantFixtures.tinyF32(), tmp.resolve("x.gguf"), "Q7_K", false, List.of(), 1),
                ProgressListener.NONE));
        assertTrue(e.getMessage().contains("Q7_K") && e.getMessage().contains("Q4_K_M"), e.getMessage());
    }

    @Test
    void quantize_fromAQuantizedFile_refusesToRequantize() {
        Path out = tmp.resolve("x.gguf");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ModelQuantizer.run(
                new QuantizeOptions(QuantFixtures.tinyRandom("Q8_0"), out, "Q4_0", false, List.of(), 1),
                ProgressListener.NONE));
        assertTrue(e.getMessage().contains("requantizing"), e.getMessage());
        assertFalse(Files.exists(out), "no partial output left behind");
    }

    @Test
    void quantize_badTensorTypeSpec_isRejected() {
        assertThrows(IllegalArgumentException.class, () -> TensorTypeRules.Override.parse("ffn_down"));
        assertThrows(IllegalArgumentException.class, () -> TensorTypeRules.Override.parse("ffn_down=q9_9"));
        assertEquals(GgmlType.F16, TensorTypeRules.Override.parse("FFN_DOWN=f16").type());
    }

    @Test
    void quantize_sameInputAndOutput_isRejected() {
        assertThrows(IllegalArgumentException.class, () -> ModelQuantizer.run(
                new QuantizeOptions(QuantFixtures.tinyF32(), QuantFixtures.tinyF32(), "Q8_0", false, List.of(), 1),
                ProgressListener.NONE));
    }
}
