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
 * Packed Q4_K, Q5_K ({@code kernels/q4_k_x16.h}) and Q6_K ({@code q6_k_x16.h}): groups of 16 rows, in the AVX-512
 * variant, on AVX-512 vectors and, for Q4_K where this machine has them, on AMX tiles ({@code juno_amx.c}): bit for bit
 * what their definition says, computed here in scalar Java, at every batch size, so a row never depends on its batch
 * mates and tiles and vectors give the same bits. Q4_K and Q5_K: per row and super-block the exact integer sum with the
 * sub-block scales, one multiply-add with {@code d·d_x}, the min terms apart, within rounding of the Java backend; Q6_K:
 * ggml's eight lanes, the Java backend's bits. Ranges split as the backend splits them; sizes checked before the
 * downcall; the 256-bit variants have no packed form of any of them and stay bit-identical to Java.
 */
class PackedKQuantsTest {
    /** The packed K-quants: Q4_K, Q5_K (the same form with each block's fifth bits after it) and Q6_K. */
    private static final GgmlType[] TYPES = {GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K};
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
        if (w.type() == GgmlType.Q6_K) {
            return q6Definition(w, x, batch, exact);
        }
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

    /**
     * Packed Q6_K's definition ({@code kernels/q6_k_x16.h}), which is the stored layout's and the Java backend's: per
     * super-block eight exact integer lanes, lane p holding {@code Σ_j sc[2j+p/4]·Σ_t u·q_x} over the elements {@code
     * 32j+4p+t} (u the unsigned six-bit quant) minus {@code 32·(sc[2p]·bsum[2p] + sc[2p+1]·bsum[2p+1])}; {@code acc_p =
     * fma(lane, d·d_x, acc_p)}; the lanes summed {@code ((0+4)+(2+6))+((1+5)+(3+7))}.
     */
    private static float[] q6Definition(WeightMatrix w, float[] x, int batch, double[] exact) {
        QuantActivations a = new QuantActivations();
        a.quantize(x, batch, w.cols(), ActivationFormat.Q8_K);
        int nb = w.cols() / 256;
        MemorySegment s = w.data();
        float[] out = new float[batch * w.rows()];
        for (int n = 0; n < batch; n++) {
            for (int m = 0; m < w.rows(); m++) {
                float[] acc = new float[8];
                double magnitude = 0;
                double value = 0;
                for (int b = 0; b < nb; b++) {
                    long o = m * w.rowStride() + b * 210L;
                    int xo = n * w.cols() + b * 256;
                    float dd = Float.float16ToFloat(s.get(U16, o + 208)) * a.d[n * nb + b];
                    for (int p = 0; p < 8; p++) {
                        int lane = 0;
                        for (int j = 0; j < 8; j++) {
                            int dot = 0;
                            for (int e = 32 * j + 4 * p; e < 32 * j + 4 * p + 4; e++) {
                                dot += q6Quant(s, o, e) * a.q[xo + e];
                            }
                            lane += s.get(ValueLayout.JAVA_BYTE, o + 192 + 2 * j + p / 4) * dot;
                        }
                        for (int sb = 2 * p; sb < 2 * p + 2; sb++) {
                            int bsum = 0;
                            for (int e = 16 * sb; e < 16 * sb + 16; e++) {
                                bsum += a.q[xo + e];
                            }
                            lane -= 32 * s.get(ValueLayout.JAVA_BYTE, o + 192 + sb) * bsum;
                        }
                        acc[p] = Math.fma((float) lane, dd, acc[p]);
                    }
                    long isum = 0;
                    long terms = 0; // Σ |sc·(u − 32)·q_x|: the size of what the lanes sum
                    for (int e = 0; e < 256; e++) {
                        long t = (long) s.get(ValueLayout.JAVA_BYTE, o + 192 + e / 16) * (q6Quant(s, o, e) - 32) * a.q[xo + e];
                        isum += t;
                        terms += Math.abs(t);
                    }
                    value += (double) isum * dd;
                    magnitude += (double) terms * Math.abs(dd);
                }
                out[n * w.rows() + m] = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
                if (exact != null) {
                    exact[n * w.rows() + m] = value;
                    exact[out.length + n * w.rows() + m] = magnitude;
                }
            }
        }
        return out;
    }

    /** Element {@code e} (0..255) of the Q6_K block at {@code o} (ggml's layout: ql at 0, qh at 128): the unsigned six-bit quant. */
    private static int q6Quant(MemorySegment s, long o, int e) {
        int h = e / 128;
        int k = e % 128 / 32;
        int l = e % 32;
        int ql = s.get(ValueLayout.JAVA_BYTE, o + 64L * h + l + 32 * (k & 1)) & 0xFF;
        int qh = s.get(ValueLayout.JAVA_BYTE, o + 128 + 32L * h + l) & 0xFF;
        return (k < 2 ? ql & 0xF : ql >> 4) | (qh >> (2 * k) & 3) << 4;
    }

    @ParameterizedTest(name = "{0} {2}")
    @MethodSource("packedKernels")
    void randomBlocks_matchTheDefinitionBitForBit_atEveryBatchSize_andTheJavaBackend(String how, NativeKernels k, GgmlType type) {
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
                        if (type == GgmlType.Q6_K) {
                            // ggml's lanes, as the Java backend sums them: its bits, and near the exact value
                            RandomBlocks.assertBits(j, actual, rows, what + " against the Java backend");
                            for (int i = 0; i < j.length; i++) {
                                assertTrue(Math.abs(actual[i] - exact[i]) <= 1e-5 * exact[j.length + i] + 1e-6,
                                        what + " index " + i + ": packed " + actual[i] + ", exact " + exact[i]);
                            }
                            continue;
                        }
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
            // packed Q4_K and Q5_K: one activation group of 16 rows per super-block; packed Q6_K: the stored layout's
            assertEquals(type == GgmlType.Q6_K ? k.activationBytes(type, batch, cols) : 4672L, xq.byteSize(), "activation bytes");
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
            assertThrows(IllegalArgumentException.class, () -> k.matmul(w, packed, xq.asSlice(0, xq.byteSize() - 1), batch, out, 0, rows),
                    "short activations");
            assertThrows(IllegalArgumentException.class, () -> k.quantize(type, true, MemorySegment.ofArray(x), batch, cols,
                    xq.asSlice(0, 100)), "short activation buffer");
        }
    }

    /** The 256-bit variants have no packed Q4_K, Q5_K or Q6_K: they refuse them and give the Java backend's bits. */
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

    /** Bytes of one packed group of 16 rows and one super-block: {@code sizeof(k16_wblk)}, {@code k5_wblk}, {@code q6_wblk}. */
    private static int weightBytes(GgmlType type) {
        return switch (type) {
            case Q5_K -> 2432 + 8 * 64;
            case Q6_K -> 16 * 210;
            default -> 2432;
        };
    }
}
