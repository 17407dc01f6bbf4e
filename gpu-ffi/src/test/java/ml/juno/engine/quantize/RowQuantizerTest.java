package ml.juno.engine.quantize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.quant.Dequantize;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Each row quantizer against llama-quantize's output: the F32 master quantized row by row (scalar reference
 * paths) must give exactly the bytes of every tensor of that type in the shipped files, and the fast lane paths
 * must equal both the files and the scalar reference.
 */
class RowQuantizerTest {

    @ParameterizedTest(name = "{0} from {1}")
    @CsvSource({
        "Q8_0, tiny-llama-random-Q8_0",
        "Q4_0, tiny-llama-random-Q4_0-pure",
        "Q2_K, tiny-llama-random-Q2_K-pure",
        "Q3_K, tiny-llama-random-Q3_K-pure",
        "Q4_K, tiny-llama-random-Q4_K-pure",
        "Q5_K, tiny-llama-random-Q5_K-pure",
        "Q6_K, tiny-llama-random-Q6_K-pure",
        "Q6_K, tiny-llama-random-Q4_K_M",
        "F16, tiny-llama-random-F16",
    })
    void quantizeRow_matchesLlamaQuantizeByteForByte(GgmlType type, String file) {
        try (GgufFile src = QuantFixtures.open(QuantFixtures.tinyF32());
             GgufFile ref = QuantFixtures.open(QuantFixtures.tinyRandom(file.substring("tiny-llama-random-".length())))) {
            int checked = 0;
            for (GgufTensorInfo t : ref.tensors()) {
                if (t.type() != type) {
                    continue;
                }
                assertArrayEquals(QuantFixtures.bytes(ref, t), quantize(RowQuantizers.create(type, false), src, src.tensor(t.name())), t.name());
                checked++;
            }
            assertTrue(checked > 0, "no " + type + " tensor in " + file);
        }
    }

    @ParameterizedTest
    @CsvSource({"Q8_0, Q8_0", "Q4_0, Q4_0", "F16, F16"})
    void quantizeRow_matchesStories260KQuantizations(GgmlType type, String file) {
        try (GgufFile src = QuantFixtures.open(QuantFixtures.stories(""));
             GgufFile ref = QuantFixtures.open(QuantFixtures.stories(file))) {
            for (GgufTensorInfo t : ref.tensors()) {
                if (t.type() == type) {
                    assertArrayEquals(QuantFixtures.bytes(ref, t), quantize(RowQuantizers.create(type), src, src.tensor(t.name())), t.name());
                }
            }
        }
    }

    /**
     * The lane paths (Vector API) against llama-quantize's Q2_K, Q3_K, Q4_K and Q6_K tensors directly: the first
     * 32 rows of four tensors (kept short: until the JIT compiles them the lane paths are slow).
     */
    @Test
    void laneQuantizers_matchLlamaQuantizeByteForByte() {
        try (GgufFile src = QuantFixtures.open(QuantFixtures.tinyF32());
             GgufFile ref = QuantFixtures.open(QuantFixtures.tinyRandom("Q4_K_M"))) {
            for (String name : new String[] {"output.weight", "blk.0.attn_q.weight"}) {
                GgufTensorInfo t = ref.tensor(name);
                int rows = 32;
                byte[] expected = java.util.Arrays.copyOf(QuantFixtures.bytes(ref, t), Math.toIntExact(rows * t.rowBytes()));
                byte[] actual = java.util.Arrays.copyOf(
                        quantize(RowQuantizers.create(t.type(), true), src, src.tensor(name), rows), expected.length);
                assertArrayEquals(expected, actual, name);
            }
        }
        try (GgufFile src = QuantFixtures.open(QuantFixtures.tinyF32());
             GgufFile q2 = QuantFixtures.open(QuantFixtures.tinyRandom("Q2_K-pure"));
             GgufFile q3 = QuantFixtures.open(QuantFixtures.tinyRandom("Q3_K-pure"))) {
            for (GgufFile ref : new GgufFile[] {q2, q3}) {
                GgufTensorInfo t = ref.tensor("blk.1.ffn_up.weight");
                byte[] expected = java.util.Arrays.copyOf(QuantFixtures.bytes(ref, t), Math.toIntExact(32 * t.rowBytes()));
                byte[] actual = java.util.Arrays.copyOf(
                        quantize(RowQuantizers.create(t.type(), true), src, src.tensor(t.name()), 32), expected.length);
                assertArrayEquals(expected, actual, t.type() + " " + t.name());
            }
        }
    }

    private static byte[] quantize(RowQuantizer q, GgufFile src, GgufTensorInfo t) {
        return quantize(q, src, t, Math.toIntExact(t.rowCount()));
    }

    private static byte[] quantize(RowQuantizer q, GgufFile src, GgufTensorInfo t, int rows) {
        GgmlType type = q.type();
        float[] x = QuantFixtures.f32(src, t);
        int n = Math.toIntExact(t.rowLength());
        int rowBytes = Math.toIntExact(type.byteSize(n));
        byte[] out = new byte[Math.toIntExact(t.rowCount()) * rowBytes];
        for (int r = 0; r < rows; r++) {
            q.quantize(x, r * n, n, out, r * rowBytes);
        }
        return out;
    }

    @Test
    void laneQuantizers_equalScalarReference_onAwkwardBlocks() {
        float[] x = awkwardData();
        RowQuantizer[][] pairs = {
            {new Q2_KQuantizer(true), new Q2_KQuantizer(false)},
            {new Q3_KQuantizer(true), new Q3_KQuantizer(false)},
            {new Q4_KQuantizer(true), new Q4_KQuantizer(false)},
            {new Q5_KQuantizer(true), new Q5_KQuantizer(false)},
            {new Q6_KQuantizer(true), new Q6_KQuantizer(false)},
        };
        for (RowQuantizer[] p : pairs) {
            int bytes = Math.toIntExact(p[0].type().byteSize(x.length));
            byte[] fast = new byte[bytes];
            byte[] ref = new byte[bytes];
            p[0].quantize(x, 0, x.length, fast, 0);
            p[1].quantize(x, 0, x.length, ref, 0);
            assertArrayEquals(ref, fast, p[0].type().toString());
        }
    }

    /**
     * Super-blocks of Gaussian, all-zero, constant, tiny, huge-range, one-spike, one-signed, small-integer,
     * sparse, cubed and log-normal values, at scales from 1e-6 to 1e5.
     */
    private static float[] awkwardData() {
        int blocks = 72;
        float[] x = new float[blocks * 256];
        Random r = new Random(7);
        for (int b = 0; b < blocks; b++) {
            float scale = (float) Math.pow(10, (b % 12) - 6);
            for (int i = 0; i < 256; i++) {
                float g = (float) r.nextGaussian();
                x[b * 256 + i] = scale * switch (b % 12) {
                    case 0 -> g;
                    case 1 -> 0f;
                    case 2 -> i < 128 ? 0.5f : -0.25f;
                    case 3 -> g * 1e-20f;
                    case 4 -> g * (float) Math.pow(10, (i % 16) - 8);
                    case 5 -> i % 37 == 0 ? 100f : g * 0.01f;
                    case 6 -> -Math.abs(g) - 1;
                    case 7 -> (i / 32) % 2 == 0 ? 0f : g;
                    case 8 -> r.nextInt(5) - 2;
                    case 9 -> r.nextInt(3) == 0 ? 0f : g;
                    case 10 -> g * g * g;
                    default -> (float) Math.exp(3 * g);
                };
            }
        }
        return x;
    }

    /**
     * ggml test-quantize-fns: 4096 values 0.1 + 2cos(i), quantize → dequantize, error sqrt(Σ diff²)/n below
     * MAX_QUANTIZATION_TOTAL_ERROR (0.002; 0.0075 for 2-bit, 0.0040 for 3-bit).
     */
    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "F16", "BF16"})
    void roundTrip_staysWithinGgmlsQuantizationError(GgmlType type) {
        float[] x = QuantFixtures.cosData(4096, 0.0f);
        byte[] q = new byte[Math.toIntExact(type.byteSize(x.length))];
        RowQuantizers.create(type).quantize(x, 0, x.length, q, 0);
        float[] back = new float[x.length];
        Dequantize.row(type, MemorySegment.ofArray(q), 0, back, 0, x.length);
        double limit = switch (type) {
            case Q2_K -> 0.0075;
            case Q3_K -> 0.0040;
            default -> 0.002;
        };
        double err = QuantFixtures.ggmlRmse(x, back);
        assertTrue(err < limit, type + " rmse " + err + " >= " + limit);
        assertTrue(err > 0 || type == GgmlType.F32, "a lossy type should lose something");
    }

    @Test
    void bf16_roundsToNearestEvenAndQuietsNaN() {
        assertEquals((short) 0x3F80, QuantMath.toBf16(1.0f));
        assertEquals((short) 0x3F80, QuantMath.toBf16(Float.intBitsToFloat(0x3F808000)));   // tie, even stays
        assertEquals((short) 0x3F82, QuantMath.toBf16(Float.intBitsToFloat(0x3F818000)));   // tie, odd rounds up
        assertEquals((short) 0x7FC1, QuantMath.toBf16(Float.intBitsToFloat(0x7F810000)));   // signalling NaN quieted
    }

    @Test
    void nearestInt_roundsHalfToEven_likeGgml() {
        assertEquals(2, QuantMath.nearestInt(2.5f));
        assertEquals(4, QuantMath.nearestInt(3.5f));
        assertEquals(-2, QuantMath.nearestInt(-2.5f));
        assertEquals(-3, QuantMath.nearestInt(-2.6f));
        assertEquals(-3f, QuantMath.roundf(-2.5f));
        assertEquals(3f, QuantMath.roundf(2.5f));
    }

    @Test
    void quantize_rejectsRowsThatAreNotWholeBlocks() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RowQuantizers.create(GgmlType.Q4_K).quantize(new float[300], 0, 300, new byte[1000], 0));
        assertTrue(e.getMessage().contains("block size 256"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RowQuantizers.create(GgmlType.IQ2_XS));
    }
}
