package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Q4_0 repacked for the native kernels (groups of 16 rows, {@code kernels/q4_0_x16.c}): bit for bit what its
 * definition says (per row and block the exact integer sum, then {@code acc = fma(isum, d_w·d_x, acc)}), computed
 * here in scalar Java; within rounding of the Java backend; every variant, row counts that are not multiples of 16,
 * batches 1 to 130, ranges split as the backend splits them, extreme blocks; sizes checked before the downcall.
 */
class PackedQ4_0Test {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int[] BATCHES = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33, 64, 127, 128, 130};

    static Stream<String> variants() {
        List<String> v = NativeKernels.runnableVariants();
        return v.isEmpty() ? Stream.of("none") : v.stream();
    }

    private static NativeKernels kernels(String isa) {
        NativeKernels.Loaded l = isa.equals("none") ? NativeKernels.load() : NativeKernels.variant(isa);
        return l.ok() ? l.kernels() : null;
    }

    /** The packed kernels' definition, in scalar Java: what every variant must give bit for bit. */
    static float[] definition(WeightMatrix w, float[] x, int batch) {
        QuantActivations a = new QuantActivations();
        a.quantize(x, batch, w.cols(), ActivationFormat.Q8_0);
        int nb = w.cols() / 32;
        float[] out = new float[batch * w.rows()];
        for (int c = 0; c < batch; c++) {
            for (int r = 0; r < w.rows(); r++) {
                float acc = 0f;
                for (int b = 0; b < nb; b++) {
                    long o = r * w.rowStride() + b * 18L;
                    int isum = 0;
                    for (int e = 0; e < 32; e++) {
                        int q = w.data().get(ValueLayout.JAVA_BYTE, o + 2 + (e & 15)) & 0xFF;
                        int nibble = e < 16 ? q & 0xF : q >> 4;
                        isum += (nibble - 8) * a.q[c * w.cols() + b * 32 + e];
                    }
                    float dw = Float.float16ToFloat(w.data().get(U16, o));
                    acc = Math.fma((float) isum, dw * a.d[c * nb + b], acc);
                }
                out[c * w.rows() + r] = acc;
            }
        }
        return out;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void randomBlocks_matchTheDefinitionBitForBit_andTheJavaBackendWithinRounding(String isa) {
        NativeKernels k = kernels(isa);
        if (k == null) {
            return; // no library: CpuBackend runs Java (NativeKernelsTest checks that fallback)
        }
        try (CpuBackend nat = new CpuBackend(2, k, true); CpuBackend java = new CpuBackend(1, null)) {
            for (int rows : new int[] {1, 5, 16, 37, 64}) {
                for (int cols : new int[] {32, 96, 544}) {
                    WeightMatrix w = WeightMatrix.dense("w", GgmlType.Q4_0, RandomBlocks.of(GgmlType.Q4_0, rows, cols, rows * 31 + cols),
                            rows, cols);
                    for (int batch : BATCHES) {
                        float[] x = gaussian(batch * cols, 11L * batch + rows);
                        float[] expected = definition(w, x, batch);
                        float[] actual = new float[batch * rows];
                        nat.matmul(w, x.clone(), actual, batch);
                        String what = isa + " " + rows + "x" + cols + ", batch " + batch;
                        assertBits(expected, actual, rows, what);
                        float[] j = new float[batch * rows];
                        java.matmul(w, x.clone(), j, batch);
                        for (int i = 0; i < j.length; i++) {
                            float tol = 1e-5f * Math.max(1f, Math.abs(j[i]));
                            assertTrue(Math.abs(j[i] - actual[i]) <= tol, what + " index " + i + ": Java " + j[i] + ", packed " + actual[i]);
                        }
                    }
                }
            }
        }
    }

    /** Rows split at every multiple of 16, as the backend's workers split them: each range gives the same bits. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void rowRanges_giveTheSameBitsAsTheWholeMatrix(String isa) {
        NativeKernels k = kernels(isa);
        if (k == null) {
            return;
        }
        int rows = 53;
        int cols = 160;
        int batch = 9;
        WeightMatrix w = WeightMatrix.dense("w", GgmlType.Q4_0, RandomBlocks.of(GgmlType.Q4_0, rows, cols, 5), rows, cols);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment packed = k.repack(w, arena);
            MemorySegment xq = arena.allocate(NativeKernels.activationBytes(GgmlType.Q4_0, batch, cols));
            float[] x = gaussian(batch * cols, 3);
            k.quantize(GgmlType.Q4_0, MemorySegment.ofArray(x), batch, cols, xq);
            float[] whole = new float[batch * rows];
            k.matmul(w, packed, xq, batch, MemorySegment.ofArray(whole), 0, rows);
            assertBits(definition(w, x, batch), whole, rows, isa + " whole");
            for (int cut = 16; cut < rows; cut += 16) {
                float[] parts = new float[batch * rows];
                k.matmul(w, packed, xq, batch, MemorySegment.ofArray(parts), 0, cut);
                k.matmul(w, packed, xq, batch, MemorySegment.ofArray(parts), cut, rows);
                assertBits(whole, parts, rows, isa + " cut at " + cut);
            }
        }
    }

    /**
     * Every nibble 15 (the largest product, 7·127 per element) and every nibble 0 (-8·127), scales 1 and the largest
     * F16 (the sums overflow to infinities), activations quantized to ±127: the definition's bits, infinities included.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    void extremeBlocks_matchTheDefinition(String isa) {
        NativeKernels k = kernels(isa);
        if (k == null) {
            return;
        }
        int rows = 20;
        int cols = 256;
        long rowBytes = GgmlType.Q4_0.byteSize(cols);
        MemorySegment data = Arena.ofAuto().allocate(rows * rowBytes, 64);
        for (int r = 0; r < rows; r++) {
            byte fill = (byte) (r % 3 == 0 ? 0xFF : r % 3 == 1 ? 0x00 : 0x5A);
            for (long i = 0; i < rowBytes; i++) {
                data.set(ValueLayout.JAVA_BYTE, r * rowBytes + i, fill);
            }
            for (int b = 0; b < cols / 32; b++) {
                data.set(U16, r * rowBytes + b * 18L, Float.floatToFloat16(r < 10 ? 1f : 65504f));
            }
        }
        WeightMatrix w = WeightMatrix.dense("w", GgmlType.Q4_0, data, rows, cols);
        try (CpuBackend nat = new CpuBackend(1, k, true)) {
            for (int batch : new int[] {1, 3, 8, 9}) {
                float[] x = new float[batch * cols];
                for (int i = 0; i < x.length; i++) {
                    int row = i / cols;
                    x[i] = row % 3 == 0 ? 1f : row % 3 == 1 ? -1f : (i % 2 == 0 ? 3f : -3f);
                }
                float[] out = new float[batch * rows];
                nat.matmul(w, x.clone(), out, batch);
                assertBits(definition(w, x, batch), out, rows, isa + " extreme, batch " + batch);
            }
        }
    }

    @Test
    void badPackedCalls_areRefusedBeforeTheDowncall() {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            return;
        }
        NativeKernels k = l.kernels();
        WeightMatrix w = WeightMatrix.dense("w", GgmlType.Q4_0, RandomBlocks.of(GgmlType.Q4_0, 40, 64, 1), 40, 64);
        assertEquals(3L * 2 * 288, k.packedBytes(w), "three groups of 16 rows, two blocks each");
        WeightMatrix q8 = WeightMatrix.dense("q5", GgmlType.Q5_0, RandomBlocks.of(GgmlType.Q5_0, 4, 64, 1), 4, 64);
        assertEquals(-1L, k.packedBytes(q8), "Q5_0 has no packed form");
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(IllegalArgumentException.class, () -> k.repack(q8, arena));
            MemorySegment packed = k.repack(w, arena);
            MemorySegment xq = arena.allocate(NativeKernels.activationBytes(GgmlType.Q4_0, 2, 64));
            k.quantize(GgmlType.Q4_0, MemorySegment.ofArray(new float[128]), 2, 64, xq);
            MemorySegment out = MemorySegment.ofArray(new float[80]);
            k.matmul(w, packed, xq, 2, out, 16, 40);
            assertThrows(IllegalArgumentException.class, () -> k.matmul(w, packed, xq, 2, out, 8, 40), "first row not a multiple of 16");
            assertThrows(IllegalArgumentException.class, () -> k.matmul(w, packed.asSlice(0, packed.byteSize() - 1), xq, 2, out, 0, 40),
                    "short packed weights");
            assertThrows(IllegalArgumentException.class, () -> k.matmul(q8, packed, xq, 2, out, 0, 4), "a type without a packed form");
        }
    }

    private static void assertBits(float[] expected, float[] actual, int rows, String what) {
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToIntBits(expected[i]) != Float.floatToIntBits(actual[i])) {
                fail(what + ": row " + (i % rows) + " of activation " + (i / rows) + ": expected " + expected[i] + ", got " + actual[i]);
            }
        }
    }

    private static float[] gaussian(int n, long seed) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) (r.nextGaussian() * (i % 7 == 0 ? 4 : 1));
        }
        return x;
    }
}
