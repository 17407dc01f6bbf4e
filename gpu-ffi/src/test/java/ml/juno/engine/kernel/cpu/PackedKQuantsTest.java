package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Packed Q4_K and Q5_K ({@code kernels/q4_k_x16.h}: groups of 16 rows, in the AVX-512 variant), on AVX-512 vectors and,
 * for Q4_K where this machine has them, on AMX tiles ({@code juno_amx.c}): bit for bit what their definition says (per
 * row and super-block the exact integer sum with the sub-block scales, one multiply-add with {@code d·d_x}, the min
 * terms apart), computed here in scalar Java, at every batch size, so a row never depends on its batch mates and tiles
 * and vectors give the same bits; within rounding of the Java backend; ranges split as the backend splits them; sizes
 * checked before the downcall; the 256-bit variants have no packed form of either and stay bit-identical to Java.
 */
class PackedKQuantsTest {
    /** The packed K-quants: Q4_K, and Q5_K (the same form with each block's fifth bits after it). */
    private static final GgmlType[] TYPES = {GgmlType.Q4_K, GgmlType.Q5_K};
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int[] BATCHES = {1, 2, 3, 4, 5, 6, 7, 8, 13, 15, 16, 17, 31, 33, 64, 127, 128, 130};

    /**
     * The kernels with packed Q4_K and Q5_K on this machine, with each type: vectors, and AMX tiles where it has them
     * (Q5_K runs on vectors there too); "none" (null) without the AVX-512 variant, whose tests then pass at once
     * (packedBytes_andTheJavaBits_withoutAvx512 checks the others).
     */
    static Stream<Arguments> packedKernels() {
        List<Arguments> out = new ArrayList<>();
        if (!NativeKernels.runnableVariants().contains("avx512vnni")) {
            return Stream.of(Arguments.of("none", null, GgmlType.Q4_K));
        }
        String before = System.getProperty("juno.native.amx");
        System.setProperty("juno.native.amx", "false");
        try {
            NativeKernels vectors = NativeKernels.variant("avx512vnni").kernels();
            for (GgmlType t : TYPES) {
                out.add(Arguments.of("vectors", vectors, t));
            }
        } finally {
            if (before == null) {
                System.clearProperty("juno.native.amx");
            } else {
                System.setProperty("juno.native.amx", before);
            }
        }
        NativeKernels amx = NativeKernels.variant("avx512vnni").kernels();
        if (amx.amx()) {
            for (GgmlType t : TYPES) {
                out.add(Arguments.of("amx", amx, t));
            }
        }
        return out.stream();
    }

    /** Scale ({@code min = false}) or min of sub-block {@code j} from a block's 12 packed bytes at {@code o + 4} (Q4_K and Q5_K alike). */
    private static int scaleOrMin(MemorySegment s, long o, int j, boolean min) {
        int[] q = new int[12];
        for (int i = 0; i < 12; i++) {
            q[i] = s.get(ValueLayout.JAVA_BYTE, o + 4 + i) & 0xFF;
        }
        if (j < 4) {
            return min ? q[j + 4] & 63 : q[j] & 63;
        }
        return min ? (q[j + 4] >> 4) | ((q[j] >> 6) << 4) : (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    }

    /** The packed kernels' definition, in scalar Java. */
    static float[] definition(WeightMatrix w, float[] x, int batch) {
        return definition(w, x, batch, null);
    }

    /**
     * As {@link #definition}; {@code exact}, when given, gets each result in double precision (from the same quantized
     * activations) and, at {@code exact[n + out.length]}, the sum of its terms' magnitudes.
     */
    static float[] definition(WeightMatrix w, float[] x, int batch, double[] exact) {
        QuantActivations a = new QuantActivations();
        a.quantize(x, batch, w.cols(), ActivationFormat.Q8_K);
        int nb = w.cols() / 256;
        MemorySegment s = w.data();
        float[] out = new float[batch * w.rows()];
        for (int n = 0; n < batch; n++) {
            for (int m = 0; m < w.rows(); m++) {
                float acc = 0f;
                float corr = 0f;
                double magnitude = 0;
                double value = 0;
                for (int b = 0; b < nb; b++) {
                    long o = m * w.rowStride() + b * (long) w.type().typeSize;
                    boolean five = w.type() == GgmlType.Q5_K; // qh at 16, then the nibbles at 48 (Q4_K: at 16)
                    int xo = n * w.cols() + b * 256;
                    float dx = a.d[n * nb + b];
                    int isum = 0;
                    float ms = 0f;
                    for (int j = 0; j < 8; j++) {
                        int dot = 0;
                        int sum = 0;
                        for (int e = 32 * j; e < 32 * j + 32; e++) {
                            int i = e % 64;
                            int q = s.get(ValueLayout.JAVA_BYTE, o + (five ? 48 : 16) + 32L * (e / 64) + (i & 31)) & 0xFF;
                            int quant = i < 32 ? q & 0xF : q >> 4;
                            if (five) {
                                int h = s.get(ValueLayout.JAVA_BYTE, o + 16 + (i & 31)) & 0xFF;
                                quant |= (h >> (2 * (e / 64) + (i < 32 ? 0 : 1)) & 1) << 4;
                            }
                            dot += quant * a.q[xo + e];
                            sum += a.q[xo + e];
                        }
                        isum += scaleOrMin(s, o, j, false) * dot;
                        float mj = scaleOrMin(s, o, j, true);
                        ms = j == 0 ? sum * mj : Math.fma((float) sum, mj, ms);
                    }
                    float d = Float.float16ToFloat(s.get(U16, o));
                    float dmin = Float.float16ToFloat(s.get(U16, o + 2));
                    acc = Math.fma((float) isum, d * dx, acc);
                    corr = corr + (dmin * dx) * ms;
                    magnitude += Math.abs((double) isum * d * dx) + Math.abs((double) dmin * dx * ms);
                    value += (double) isum * d * dx - (double) dmin * dx * ms;
                }
                out[n * w.rows() + m] = acc - corr;
                if (exact != null) {
                    exact[n * w.rows() + m] = value;
                    exact[out.length + n * w.rows() + m] = magnitude;
                }
            }
        }
        return out;
    }

    @ParameterizedTest(name = "{0} {2}")
    @MethodSource("packedKernels")
    void randomBlocks_matchTheDefinitionBitForBit_atEveryBatchSize_andTheJavaBackendWithinRounding(String how, NativeKernels k, GgmlType type) {
        if (k == null) {
            return;
        }
        assertEquals(how.equals("amx"), k.amx());
        try (CpuBackend nat = new CpuBackend(2, k, true); CpuBackend java = new CpuBackend(1, null)) {
            for (int rows : new int[] {1, 5, 16, 37}) {
                for (int cols : new int[] {256, 768}) {
                    WeightMatrix w = WeightMatrix.dense("w", type, RandomBlocks.of(type, rows, cols, rows * 7 + cols), rows, cols);
                    for (int batch : BATCHES) {
                        float[] x = RandomBlocks.activations(batch * cols, 13L * batch + rows);
                        float[] actual = new float[batch * rows];
                        nat.matmul(w, x.clone(), actual, batch);
                        String what = how + " " + type + " " + rows + "x" + cols + ", batch " + batch;
                        double[] exact = new double[2 * batch * rows];
                        RandomBlocks.assertBits(definition(w, x, batch, exact), actual, rows, what);
                        float[] j = new float[batch * rows];
                        java.matmul(w, x.clone(), j, batch);
                        for (int i = 0; i < j.length; i++) {
                            double magnitude = exact[j.length + i];
                            // the whole integer sums leave a few float roundings: close to the exact value; the Java
                            // backend's lane sums err more (up to 3e-5 of the terms seen here), so it gets a looser bound
                            assertTrue(Math.abs(actual[i] - exact[i]) <= 1e-6 * magnitude + 1e-7,
                                    what + " index " + i + ": packed " + actual[i] + ", exact " + exact[i]);
                            assertTrue(Math.abs(j[i] - actual[i]) <= 1e-4 * magnitude + 1e-6,
                                    what + " index " + i + ": Java " + j[i] + ", packed " + actual[i] + ", terms " + magnitude);
                        }
                    }
                }
            }
        }
    }

    /** A row's bits do not depend on how many rows share its batch (tiles of 8, 4, 2 or 1 rows; AMX from four). */
    @ParameterizedTest(name = "{0} {2}")
    @MethodSource("packedKernels")
    void eachRow_givesTheSameBitsAloneAndInABatch(String how, NativeKernels k, GgmlType type) {
        if (k == null) {
            return;
        }
        int rows = 48;
        int cols = 512;
        WeightMatrix w = WeightMatrix.dense("w", type, RandomBlocks.of(type, rows, cols, 9), rows, cols);
        try (CpuBackend nat = new CpuBackend(1, k, true)) {
            int batch = 21;
            float[] x = RandomBlocks.activations(batch * cols, 4);
            float[] all = new float[batch * rows];
            nat.matmul(w, x.clone(), all, batch);
            for (int n = 0; n < batch; n++) {
                float[] one = new float[rows];
                float[] xn = java.util.Arrays.copyOfRange(x, n * cols, (n + 1) * cols);
                nat.matmul(w, xn, one, 1);
                RandomBlocks.assertBits(java.util.Arrays.copyOfRange(all, n * rows, (n + 1) * rows), one, rows, how + " " + type + " activation row " + n);
            }
        }
    }

    /** Weight rows split at every multiple of 16, activation rows quantized in ranges: the whole call's bits. */
    @ParameterizedTest(name = "{0} {2}")
    @MethodSource("packedKernels")
    void rowRanges_andBadCalls(String how, NativeKernels k, GgmlType type) {
        if (k == null) {
            return;
        }
        int rows = 53;
        int cols = 256;
        int batch = 9;
        WeightMatrix w = WeightMatrix.dense("w", type, RandomBlocks.of(type, rows, cols, 5), rows, cols);
        int group = weightBytes(type);
        assertEquals(4L * group, k.packedBytes(w), "four groups of 16 rows, one super-block each");
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment packed = k.repack(w, arena);
            MemorySegment xq = arena.allocate(k.activationBytes(type, true, batch, cols), 64);
            assertEquals(4672L, xq.byteSize(), "one activation group of 16 rows, one super-block");
            float[] x = RandomBlocks.activations(batch * cols, 3);
            k.quantize(type, true, MemorySegment.ofArray(x), batch, cols, xq);
            float[] whole = new float[batch * rows];
            k.matmul(w, packed, xq, batch, MemorySegment.ofArray(whole), 0, rows);
            RandomBlocks.assertBits(definition(w, x, batch), whole, rows, how + " " + type + " whole");
            MemorySegment ranged = arena.allocate(xq.byteSize(), 64);
            ranged.fill((byte) 0x5A);
            for (int[] range : new int[][] {{6, 9}, {0, 2}, {2, 6}}) {
                k.quantizeRows(type, true, MemorySegment.ofArray(x), batch, cols, ranged, range[0], range[1]);
            }
            assertEquals(-1L, xq.mismatch(ranged), "activations quantized in three ranges");
            for (int cut = 16; cut < rows; cut += 16) {
                float[] parts = new float[batch * rows];
                k.matmul(w, packed, xq, batch, MemorySegment.ofArray(parts), 0, cut);
                k.matmul(w, packed, xq, batch, MemorySegment.ofArray(parts), cut, rows);
                RandomBlocks.assertBits(whole, parts, rows, how + " " + type + " cut at " + cut);
            }
            MemorySegment out = MemorySegment.ofArray(new float[batch * rows]);
            assertThrows(IllegalArgumentException.class, () -> k.matmul(w, packed, xq, batch, out, 8, rows), "first row not a multiple of 16");
            assertThrows(IllegalArgumentException.class, () -> k.matmul(w, packed.asSlice(0, 4L * group - 1), xq, batch, out, 0, rows),
                    "short packed weights");
            assertThrows(IllegalArgumentException.class, () -> k.matmul(w, packed, xq.asSlice(0, 4671), batch, out, 0, rows), "short activations");
            assertThrows(IllegalArgumentException.class, () -> k.quantize(type, true, MemorySegment.ofArray(x), batch, cols,
                    xq.asSlice(0, 100)), "short activation buffer");
        }
    }

    /** The 256-bit variants have no packed Q4_K or Q5_K: they refuse them and give the Java backend's bits. */
    @Test
    void packedBytes_andTheJavaBits_withoutAvx512() {
        int rows = 37;
        int cols = 512;
        int batch = 9;
        for (GgmlType type : TYPES) {
            WeightMatrix w = WeightMatrix.dense("w", type, RandomBlocks.of(type, rows, cols, 2), rows, cols);
            float[] x = RandomBlocks.activations(batch * cols, 8);
            float[] expected = new float[batch * rows];
            try (CpuBackend java = new CpuBackend(1, null)) {
                java.matmul(w, x.clone(), expected, batch);
            }
            for (String isa : NativeKernels.runnableVariants()) {
                NativeKernels k = NativeKernels.variant(isa).kernels();
                if (isa.equals("avx512vnni")) {
                    assertEquals(3L * 2 * weightBytes(type), k.packedBytes(w), type + ": three groups of 16 rows, two super-blocks each");
                    continue;
                }
                assertEquals(-1L, k.packedBytes(w), isa + " " + type);
                assertThrows(IllegalArgumentException.class, () -> k.quantize(type, true, MemorySegment.ofArray(x), batch, cols,
                        MemorySegment.ofArray(new byte[1 << 16])), isa + " packed activations for " + type);
                float[] actual = new float[batch * rows];
                try (CpuBackend nat = new CpuBackend(2, k, true)) {
                    nat.matmul(w, x.clone(), actual, batch);
                }
                RandomBlocks.assertBits(expected, actual, rows, isa + " unpacked " + type);
            }
        }
    }

    /** Bytes of one packed group of 16 rows and one super-block: {@code sizeof(k16_wblk)}, {@code sizeof(k5_wblk)}. */
    private static int weightBytes(GgmlType type) {
        return type == GgmlType.Q5_K ? 2432 + 8 * 64 : 2432;
    }
}
