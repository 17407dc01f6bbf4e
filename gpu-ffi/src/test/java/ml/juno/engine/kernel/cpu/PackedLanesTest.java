package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Q4_0 and Q8_0 repacked for the native kernels, one row per vector lane in groups of 16 rows ({@code
 * kernels/q4_0_x16.c}, every variant; {@code kernels/q8_0_x16.h}, the AVX-512 variant only): bit for bit what their
 * definition says (per row and block the exact integer sum, then {@code acc = fma(isum, d_w·d_x, acc)}), computed here
 * in scalar Java; within rounding of the stored layout's kernels (the Java backend's bits); row counts that are not
 * multiples of 16, batches 1 to 130, ranges split as the backend splits them, extreme blocks; sizes checked before
 * the downcall; a variant without the packed form refuses it and gives the Java backend's bits.
 */
class PackedLanesTest {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int[] BATCHES = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15, 16, 17, 31, 33, 64, 127, 128, 130};

    /** Every (type, variant with its packed form) on this machine, or (type, "none") where there is none. */
    static Stream<Arguments> cases() {
        List<String> runnable = NativeKernels.runnableVariants();
        List<Arguments> out = new ArrayList<>();
        for (GgmlType t : new GgmlType[] {GgmlType.Q4_0, GgmlType.Q8_0}) {
            List<String> v = t == GgmlType.Q4_0 ? runnable : runnable.stream().filter("avx512vnni"::equals).toList();
            if (v.isEmpty()) {
                out.add(Arguments.of(t, "none"));
            }
            v.forEach(isa -> out.add(Arguments.of(t, isa)));
        }
        return out.stream();
    }

    private static NativeKernels kernels(String isa) {
        return isa.equals("none") ? null : NativeKernels.variant(isa).kernels();
    }

    /** Quant {@code e} (0..31) of the block at {@code o}: Q4_0's nibble less 8, Q8_0's signed byte. */
    private static int quant(GgmlType type, MemorySegment s, long o, int e) {
        if (type == GgmlType.Q8_0) {
            return s.get(ValueLayout.JAVA_BYTE, o + 2 + e);
        }
        int q = s.get(ValueLayout.JAVA_BYTE, o + 2 + (e & 15)) & 0xFF;
        return (e < 16 ? q & 0xF : q >> 4) - 8;
    }

    /** The packed kernels' definition, in scalar Java: what every variant must give bit for bit. */
    static float[] definition(WeightMatrix w, float[] x, int batch) {
        return definition(w, x, batch, null);
    }

    /** As {@link #definition}; {@code magnitude}, when given, gets each result's sum of its products' magnitudes. */
    static float[] definition(WeightMatrix w, float[] x, int batch, double[] magnitude) {
        QuantActivations a = new QuantActivations();
        a.quantize(x, batch, w.cols(), ActivationFormat.Q8_0);
        int nb = w.cols() / 32;
        float[] out = new float[batch * w.rows()];
        for (int c = 0; c < batch; c++) {
            for (int r = 0; r < w.rows(); r++) {
                float acc = 0f;
                double sum = 0;
                for (int b = 0; b < nb; b++) {
                    long o = r * w.rowStride() + b * (long) w.type().typeSize;
                    int isum = 0;
                    int abs = 0;
                    for (int e = 0; e < 32; e++) {
                        int p = quant(w.type(), w.data(), o, e) * a.q[c * w.cols() + b * 32 + e];
                        isum += p;
                        abs += Math.abs(p);
                    }
                    float dw = Float.float16ToFloat(w.data().get(U16, o));
                    acc = Math.fma((float) isum, dw * a.d[c * nb + b], acc);
                    sum += Math.abs((double) abs * dw * a.d[c * nb + b]);
                }
                out[c * w.rows() + r] = acc;
                if (magnitude != null) {
                    magnitude[c * w.rows() + r] = sum;
                }
            }
        }
        return out;
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void randomBlocks_matchTheDefinitionBitForBit_andTheStoredLayoutWithinRounding(GgmlType type, String isa) {
        NativeKernels k = kernels(isa);
        if (k == null) {
            return; // no packed form here: packedBytes_andTheJavaBits_withoutIt checks that
        }
        try (CpuBackend nat = new CpuBackend(2, k, true); CpuBackend plain = new CpuBackend(1, k, false)) {
            for (int rows : new int[] {1, 5, 16, 37, 64}) {
                for (int cols : new int[] {32, 96, 544}) {
                    WeightMatrix w = WeightMatrix.dense("w", type, RandomBlocks.of(type, rows, cols, rows * 31 + cols), rows, cols);
                    for (int batch : BATCHES) {
                        float[] x = RandomBlocks.activations(batch * cols, 11L * batch + rows);
                        double[] magnitude = new double[batch * rows];
                        float[] expected = definition(w, x, batch, magnitude);
                        float[] actual = new float[batch * rows];
                        nat.matmul(w, x.clone(), actual, batch);
                        String what = type + " " + isa + " " + rows + "x" + cols + ", batch " + batch;
                        RandomBlocks.assertBits(expected, actual, rows, what);
                        float[] j = new float[batch * rows];
                        plain.matmul(w, x.clone(), j, batch);
                        for (int i = 0; i < j.length; i++) {
                            // the stored layout sums eight lanes per row, so the two round differently: Q4_0 within
                            // 1e-5 of the result, Q8_0 (from eight rows float products) at the size of its products
                            double tol = type == GgmlType.Q4_0 ? 1e-5 * Math.max(1f, Math.abs(j[i])) : 1e-5 * magnitude[i] + 1e-7;
                            assertTrue(Math.abs(j[i] - actual[i]) <= tol,
                                    what + " index " + i + ": stored layout " + j[i] + ", packed " + actual[i]);
                        }
                    }
                }
            }
        }
    }

    /** Rows split at every multiple of 16, as the backend's workers split them: each range gives the same bits. */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void rowRanges_giveTheSameBitsAsTheWholeMatrix(GgmlType type, String isa) {
        NativeKernels k = kernels(isa);
        if (k == null) {
            return;
        }
        int rows = 53;
        int cols = 160;
        int batch = 9;
        WeightMatrix w = WeightMatrix.dense("w", type, RandomBlocks.of(type, rows, cols, 5), rows, cols);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment packed = k.repack(w, arena);
            MemorySegment xq = arena.allocate(NativeKernels.activationBytes(type, batch, cols));
            float[] x = RandomBlocks.activations(batch * cols, 3);
            k.quantize(type, true, MemorySegment.ofArray(x), batch, cols, xq);
            float[] whole = new float[batch * rows];
            k.matmul(w, packed, xq, batch, MemorySegment.ofArray(whole), 0, rows);
            RandomBlocks.assertBits(definition(w, x, batch), whole, rows, isa + " whole");
            for (int cut = 16; cut < rows; cut += 16) {
                float[] parts = new float[batch * rows];
                k.matmul(w, packed, xq, batch, MemorySegment.ofArray(parts), 0, cut);
                k.matmul(w, packed, xq, batch, MemorySegment.ofArray(parts), cut, rows);
                RandomBlocks.assertBits(whole, parts, rows, isa + " cut at " + cut);
            }
        }
    }

    /**
     * The largest products (Q4_0: every nibble 15 or 0, 7·127 and -8·127 per element; Q8_0: every quant 127 or -128)
     * and a mix, scales 1 and the largest F16 (the sums overflow to infinities), activations quantized to ±127: the
     * definition's bits, infinities included.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void extremeBlocks_matchTheDefinition(GgmlType type, String isa) {
        NativeKernels k = kernels(isa);
        if (k == null) {
            return;
        }
        int rows = 20;
        int cols = 256;
        long rowBytes = type.byteSize(cols);
        int[] fills = type == GgmlType.Q8_0 ? new int[] {0x7F, 0x80, 0xA5} : new int[] {0xFF, 0x00, 0x5A};
        MemorySegment data = Arena.ofAuto().allocate(rows * rowBytes, 64);
        for (int r = 0; r < rows; r++) {
            for (long i = 0; i < rowBytes; i++) {
                data.set(ValueLayout.JAVA_BYTE, r * rowBytes + i, (byte) fills[r % 3]);
            }
            for (int b = 0; b < cols / 32; b++) {
                data.set(U16, r * rowBytes + b * (long) type.typeSize, Float.floatToFloat16(r < 10 ? 1f : 65504f));
            }
        }
        WeightMatrix w = WeightMatrix.dense("w", type, data, rows, cols);
        try (CpuBackend nat = new CpuBackend(1, k, true)) {
            for (int batch : new int[] {1, 3, 8, 9}) {
                float[] x = new float[batch * cols];
                for (int i = 0; i < x.length; i++) {
                    int row = i / cols;
                    x[i] = row % 3 == 0 ? 1f : row % 3 == 1 ? -1f : (i % 2 == 0 ? 3f : -3f);
                }
                float[] out = new float[batch * rows];
                nat.matmul(w, x.clone(), out, batch);
                RandomBlocks.assertBits(definition(w, x, batch), out, rows, isa + " extreme, batch " + batch);
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
        WeightMatrix q5 = WeightMatrix.dense("q5", GgmlType.Q5_0, RandomBlocks.of(GgmlType.Q5_0, 4, 64, 1), 4, 64);
        assertEquals(-1L, k.packedBytes(q5), "Q5_0 has no packed form");
        try (Arena arena = Arena.ofConfined()) {
            assertThrows(IllegalArgumentException.class, () -> k.repack(q5, arena));
            MemorySegment packed = k.repack(w, arena);
            MemorySegment xq = arena.allocate(NativeKernels.activationBytes(GgmlType.Q4_0, 2, 64));
            k.quantize(GgmlType.Q4_0, MemorySegment.ofArray(new float[128]), 2, 64, xq);
            MemorySegment out = MemorySegment.ofArray(new float[80]);
            k.matmul(w, packed, xq, 2, out, 16, 40);
            assertThrows(IllegalArgumentException.class, () -> k.matmul(w, packed, xq, 2, out, 8, 40), "first row not a multiple of 16");
            assertThrows(IllegalArgumentException.class, () -> k.matmul(w, packed.asSlice(0, packed.byteSize() - 1), xq, 2, out, 0, 40),
                    "short packed weights");
            assertThrows(IllegalArgumentException.class, () -> k.matmul(q5, packed, xq, 2, out, 0, 4), "a type without a packed form");
        }
    }

    /** Q8_0 in the 256-bit variants: no packed form (packedBytes -1, packed activations refused), the Java backend's bits. */
    @Test
    void packedBytes_andTheJavaBits_withoutIt() {
        WeightMatrix w = WeightMatrix.dense("w", GgmlType.Q8_0, RandomBlocks.of(GgmlType.Q8_0, 40, 64, 1), 40, 64);
        float[] x = RandomBlocks.activations(3 * 64, 2);
        float[] expected = new float[3 * 40];
        try (CpuBackend java = new CpuBackend(1, null)) {
            java.matmul(w, x.clone(), expected, 3);
        }
        for (String isa : NativeKernels.runnableVariants()) {
            NativeKernels k = NativeKernels.variant(isa).kernels();
            if (isa.equals("avx512vnni")) {
                assertEquals(3L * 2 * 544, k.packedBytes(w), "three groups of 16 rows, two blocks each");
                continue;
            }
            assertEquals(-1L, k.packedBytes(w), isa);
            assertThrows(IllegalArgumentException.class, () -> k.quantize(GgmlType.Q8_0, true, MemorySegment.ofArray(x), 3, 64,
                    MemorySegment.ofArray(new byte[1 << 12])), isa + " packed activations");
            float[] actual = new float[3 * 40];
            try (CpuBackend nat = new CpuBackend(2, k, true)) {
                nat.matmul(w, x.clone(), actual, 3);
            }
            RandomBlocks.assertBits(expected, actual, 40, isa + " unpacked Q8_0");
        }
    }
}
