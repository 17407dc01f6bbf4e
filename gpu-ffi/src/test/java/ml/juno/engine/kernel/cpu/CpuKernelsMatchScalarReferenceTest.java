package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.util.Random;
import java.util.stream.Stream;
import ml.juno.engine.kernel.AttentionShape;
import ml.juno.engine.kernel.BatchRows;
import ml.juno.engine.kernel.RopeShape;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kv.KvCache;
import ml.juno.engine.kv.KvLayout;
import ml.juno.engine.kv.KvType;
import ml.juno.engine.quant.Dequantize;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every vector kernel against its scalar reference, per block type. */
class CpuKernelsMatchScalarReferenceTest {
    private static final CpuBackend CPU = new CpuBackend(2);
    private static final ScalarBackend SCALAR = new ScalarBackend();

    @AfterAll
    static void close() {
        CPU.close();
    }

    static Stream<GgmlType> types() {
        return Stream.of(GgmlType.values()).filter(CpuTypeTraits::supports);
    }

    private static BlockKernel kernel(GgmlType t) {
        return CpuTypeTraits.of(t).kernel();
    }

    private static QuantKernel quantKernel(GgmlType t) {
        return CpuTypeTraits.of(t).quantKernel();
    }

    private static float[] gaussian(int n, long seed) {
        Random r = new Random(seed);
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = (float) r.nextGaussian();
        }
        return x;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void vectorDecode_isBitExactWithScalarDecode_andWithTheQuantPackage(GgmlType t) {
        int rows = 3;
        int cols = 512;
        MemorySegment s = RandomBlocks.of(t, rows, cols, 42);
        float[] vec = new float[rows * cols];
        float[] ref = new float[rows * cols];
        float[] other = new float[rows * cols];
        kernel(t).decode(s, 0, vec, 0, rows * cols);
        kernel(t).decodeScalar(s, 0, ref, 0, rows * cols);
        Dequantize.row(t, s, 0, other, 0, rows * cols);
        assertArrayEquals(ref, vec, t + ": vector vs scalar decode");
        assertArrayEquals(other, ref, t + ": scalar decode vs ml.juno.engine.quant.Dequantize");
    }

    static Stream<GgmlType> quantTypes() {
        return types().filter(t -> CpuTypeTraits.of(t).quantized());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("quantTypes")
    void integerDecode_isBitExactVectorVsScalar_andReassemblesTheDequantizedValues(GgmlType t) {
        int cols = 512;
        MemorySegment s = RandomBlocks.of(t, 1, cols, 43);
        QuantRow vec = new QuantRow(cols);
        QuantRow ref = new QuantRow(cols);
        QuantKernel k = quantKernel(t);
        vec.decode(k, s, 0, cols);
        ref.decodeScalar(k, s, 0, cols);
        assertArrayEquals(ref.q, vec.q, t + " quants");
        assertArrayEquals(ref.sc, vec.sc, t + " scales");
        assertArrayEquals(ref.d, vec.d, t + " d");
        assertArrayEquals(ref.m, vec.m, t + " mins");
        assertArrayEquals(ref.dmin, vec.dmin, t + " dmin");
        // value = d·sc·q − dmin·m (K-quants) or d·q + m (Q4_1/Q5_1) must equal the float dequantization
        float[] deq = new float[cols];
        k.decodeScalar(s, 0, deq, 0, cols);
        for (int i = 0; i < cols; i++) {
            float v;
            if (t.blockSize == 256) {
                int g = k.subBlock;
                int b = i / 256;
                int j = i / g;
                boolean mins = t == GgmlType.Q2_K || t == GgmlType.Q4_K || t == GgmlType.Q5_K;
                v = ref.d[b] * ref.sc[j] * ref.q[i] - (mins ? ref.dmin[b] * ref.m[j] : 0f);
            } else {
                int b = i / 32;
                boolean mins = t == GgmlType.Q4_1 || t == GgmlType.Q5_1;
                v = ref.q[i] * ref.d[b] + (mins ? ref.m[b] : 0f);
            }
            assertEquals(deq[i], v, 1e-6f * Math.max(1f, Math.abs(deq[i])), t + " element " + i);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("quantTypes")
    void fusedAndBatchedDots_areBitIdentical_andCloseToTheScalarReference(GgmlType t) {
        int cols = 512;
        checkDots(t, RandomBlocks.of(t, 4, cols, 44), gaussian(6 * cols, 45), cols);
    }

    /**
     * Q6_K at the edges of exactness: unsigned quants 63 with sub-block scales −128 and 127, quants 0 (−32), and
     * activations quantized to ±127 everywhere, so every lane of a half super-block reaches 16·128·63·127 (just below
     * 2^24, the float path's limit) and the integer lanes ±2^25. All paths must still agree bit for bit.
     */
    @Test
    void q6K_atTheLargestLaneSums_staysBitIdenticalAcrossPaths() {
        // {ql and qh bytes, every scale byte}
        checkExtremeBlocks(GgmlType.Q6_K, 192, 16, new int[][] {{0xFF, -128}, {0xFF, 127}, {0x00, -128}, {0xFF, -128}}, 127, 46);
    }

    @Test
    void q3K_atTheLargest16BitSums_staysBitIdenticalAcrossPaths() {
        // the fused Q3_K kernel adds two products q·sc·x in a 16-bit lane: |q·sc| reaches 128 (q = -4, sc = -32) and
        // 124 (q = -4, sc = 31), |x| 127. {hmask and qs bytes, every scale byte}
        checkExtremeBlocks(GgmlType.Q3_K, 96, 12, new int[][] {{0x00, 0x00}, {0x00, 0xFF}, {0xFF, 0x00}, {0x00, 0x00}}, 0xFF, 47);
    }

    /**
     * Four rows of two super-blocks each: quant bytes {@code [0, quantBytes)} of every block set to {@code rowSpec[r][0]},
     * the {@code scaleBytes} after them to {@code rowSpec[r][1]}, then {@code d = 0.5}; row 3 mixes in 0x5A quant bytes
     * and {@code mixedScale} scale bytes. Activation rows 0..2 are all 1, all −1 and alternating (quantized to ±127).
     */
    private static void checkExtremeBlocks(GgmlType t, int quantBytes, int scaleBytes, int[][] rowSpec, int mixedScale, long seed) {
        int cols = 512;
        int bytes = (int) t.byteSize(cols);
        MemorySegment s = MemorySegment.ofArray(new byte[4 * bytes]);
        for (int r = 0; r < 4; r++) {
            for (int b = 0; b < cols / 256; b++) {
                long o = (long) r * bytes + (long) b * t.typeSize;
                for (int i = 0; i < quantBytes; i++) {
                    s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, o + i, (byte) (r == 3 && i % 3 == 0 ? 0x5A : rowSpec[r][0]));
                }
                for (int j = 0; j < scaleBytes; j++) {
                    s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, o + quantBytes + j, (byte) (r == 3 && j % 2 == 1 ? mixedScale : rowSpec[r][1]));
                }
                s.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED, o + quantBytes + scaleBytes, Float.floatToFloat16(0.5f));
            }
        }
        float[] x = gaussian(6 * cols, seed);
        for (int i = 0; i < 3 * cols; i++) {
            x[i] = i < cols ? 1f : i < 2 * cols ? -1f : (i % 2 == 0 ? 1f : -1f);
        }
        checkDots(t, s, x, cols);
    }

    /** Fused, one-row, four-row and four-by-two batched dots of four weight rows with six activation rows. */
    private static void checkDots(GgmlType t, MemorySegment s, float[] xs, int cols) {
        CpuTypeTraits traits = CpuTypeTraits.of(t);
        QuantKernel k = traits.quantKernel();
        QuantActivations x = new QuantActivations();
        x.quantize(xs, 6, cols, traits.activation());
        k.toFloatLanes(x, 6);
        QuantRow[] tile = new QuantRow[4];
        for (int r = 0; r < 4; r++) {
            tile[r] = new QuantRow(cols);
            tile[r].decode(k, s, r * t.byteSize(cols), cols);
            tile[r].toFloatLanes();
        }
        float[][] four = new float[6][4];
        for (int b = 0; b < 6; b++) {
            k.dotFloat4(tile, x, b, four[b], 0);
        }
        float[] pairs = new float[6 * 4]; // [activation row][weight row], two activation rows per call
        float[] corr = new float[4 * 6]; // scratch: the min terms of the four rows with the six activation rows
        assertEquals(6, k.dotTilePairs(tile, x, 6, pairs, 0, 4, corr), "activation rows done in pairs");
        float[] fused = new float[4];
        for (int r = 0; r < 4; r++) {
            QuantRow row = tile[r];
            for (int b = 0; b < 6; b++) {
                float one = k.dotFloat(row, x, b);
                assertEquals(Float.floatToIntBits(one), Float.floatToIntBits(four[b][r]), t + " four weight rows, row " + r + " x " + b);
                assertEquals(Float.floatToIntBits(one), Float.floatToIntBits(pairs[b * 4 + r]), t + " four weight rows x two activation rows, row " + r + " x " + b);
                if (traits.fusedBelow() > 0) {
                    k.dotRows(s, t.byteSize(cols), cols, x, b, fused, 0, r, r + 1);
                    assertEquals(Float.floatToIntBits(one), Float.floatToIntBits(fused[r]), t + " fused row " + r + " x " + b);
                }
                float ref = k.dotScalar(row, x, b);
                if (t == GgmlType.Q6_K) { // the scalar reference computes ggml's lanes too
                    assertEquals(Float.floatToIntBits(ref), Float.floatToIntBits(one), t + " row " + r + " x " + b + " vs scalar");
                } else {
                    assertEquals(ref, one, 1e-5f * Math.max(1f, Math.abs(ref)), t + " row " + r + " vs scalar");
                }
            }
        }
    }

    @Test
    void packedK4ScalesAndMins_equalTheScalarUnpacking() {
        forEachScaleBlock(5, (s, lo, hi) -> {
            for (int j = 0; j < 8; j++) {
                assertEquals(Q4_KKernel.scaleK4(s, 0, j), QuantLanes.k4(Q4_KKernel.scalesK4(lo, hi), j), "scale " + j);
                assertEquals(Q4_KKernel.minK4(s, 0, j), QuantLanes.k4(Q4_KKernel.minsK4(lo, hi), j), "min " + j);
            }
        });
    }

    @Test
    void packedQ3KScales_equalTheScalarUnpacking() {
        forEachScaleBlock(6, (s, lo, hi) -> {
            for (int j = 0; j < 16; j++) {
                assertEquals(Q3_KKernel.q3kScale(s, 0, j) + 32, QuantLanes.k4(Q3_KKernel.q3Scales(lo, hi, j / 8), j % 8), "scale " + j);
            }
        });
    }

    /** A check of 12 packed scale bytes {@code s}, also read as {@code lo} (bytes 0..7) and {@code hi} (bytes 8..11). */
    private interface ScaleBlockCheck {
        void check(MemorySegment s, long lo, int hi);
    }

    /** Runs {@code check} on 20 000 blocks of 12 scale bytes: first each byte value alone (at rotating positions), then random. */
    private static void forEachScaleBlock(long seed, ScaleBlockCheck check) {
        java.util.Random r = new java.util.Random(seed);
        MemorySegment s = MemorySegment.ofArray(new byte[12]);
        for (int n = 0; n < 20_000; n++) {
            for (int i = 0; i < 12; i++) {
                s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (n < 256 ? (i == n % 12 ? n : 0) : r.nextInt(256)));
            }
            check.check(s, s.get(QuantLanes.U64, 0), s.get(QuantLanes.U32, 8));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void batchedMatmul_isBitIdenticalToEachRowAlone(GgmlType t) {
        // 37 rows: chunks of 16 with a partial last tile; 9 activation rows: pairs and an odd one; ten super-blocks
        // (the K-quant min terms go eight super-blocks at a time, then one by one); float weights: the tiles of four
        // rows (two 8-lane accumulators each) against the single-row 16-lane order
        int rows = 37;
        int cols = 2560;
        WeightMatrix w = WeightMatrix.dense("w", t, RandomBlocks.of(t, rows, cols, 11), rows, cols);
        int batch = 9;
        float[] x = gaussian(batch * cols, 12);
        float[] out = new float[batch * rows];
        CPU.matmul(w, x, out, batch);
        float[] one = new float[rows];
        for (int b = 0; b < batch; b++) {
            CPU.matmul(w, java.util.Arrays.copyOfRange(x, b * cols, (b + 1) * cols), one, 1);
            for (int r = 0; r < rows; r++) {
                assertEquals(Float.floatToIntBits(one[r]), Float.floatToIntBits(out[b * rows + r]), t + " row " + r + " x " + b);
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("types")
    void matmul_matchesScalarReference_forEveryBatchSize(GgmlType t) {
        int rows = 37;
        int cols = 512;
        WeightMatrix w = WeightMatrix.dense("w", t, RandomBlocks.of(t, rows, cols, 7), rows, cols);
        for (int batch : new int[] {1, 3, 4, 9}) {
            float[] x = gaussian(batch * cols, batch);
            float[] out = new float[batch * rows];
            float[] ref = new float[batch * rows];
            CPU.matmul(w, x, out, batch);
            SCALAR.matmul(w, x, ref, batch);
            float[] row = new float[cols];
            for (int b = 0; b < batch; b++) {
                for (int r = 0; r < rows; r++) {
                    kernel(t).decodeScalar(w.data(), r * w.rowStride(), row, 0, cols);
                    double scale = 0;
                    for (int k = 0; k < cols; k++) {
                        scale += Math.abs(row[k] * x[b * cols + k]);
                    }
                    float o = out[b * rows + r];
                    float e = ref[b * rows + r];
                    double tol = 1e-5 * scale + 1e-6;
                    int bb = b;
                    int rr = r;
                    assertTrue(Math.abs(o - e) <= tol, () -> t + " batch row " + bb + " out " + rr + ": " + o + " vs " + e);
                }
            }
        }
    }

    @Test
    void matmul_ofASliceOfColumns_equalsTheFullProductOverThoseColumns() {
        int rows = 8;
        int cols = 512;
        WeightMatrix w = WeightMatrix.dense("w", GgmlType.Q4_K, RandomBlocks.of(GgmlType.Q4_K, rows, cols, 3), rows, cols);
        WeightMatrix right = w.columnSlice(256, 256);
        float[] x = gaussian(cols, 5);
        float[] xr = java.util.Arrays.copyOfRange(x, 256, 512);
        float[] xz = x.clone();
        java.util.Arrays.fill(xz, 0, 256, 0f);
        float[] a = new float[rows];
        float[] b = new float[rows];
        SCALAR.matmul(right, xr, a, 1);
        float[] full = new float[rows];
        float[] row = new float[cols];
        for (int r = 0; r < rows; r++) {
            kernel(GgmlType.Q4_K).decodeScalar(w.data(), r * w.rowStride(), row, 0, cols);
            float[] q = new float[cols];
            ActivationRounding.round(ActivationFormat.Q8_K, xr, q, 0, 256);
            double s = 0;
            for (int k = 0; k < 256; k++) {
                s += row[256 + k] * q[k];
            }
            full[r] = (float) s;
        }
        CPU.matmul(right, xr, b, 1);
        for (int r = 0; r < rows; r++) {
            assertEquals(full[r], a[r], 1e-4f);
            assertEquals(a[r], b[r], 1e-4f);
        }
    }

    @Test
    void rmsNorm_swiglu_add_matchScalarReference() {
        int dim = 203;
        int batch = 3;
        float[] x = gaussian(batch * dim, 1);
        float[] w = gaussian(dim, 2);
        float[] a = new float[batch * dim];
        float[] b = new float[batch * dim];
        CPU.rmsNorm(x, w, 1e-5f, a, batch, dim);
        SCALAR.rmsNorm(x, w, 1e-5f, b, batch, dim);
        assertArrayEquals(b, a, 1e-6f);

        float[] g1 = gaussian(1000, 3);
        float[] g2 = g1.clone();
        float[] up = gaussian(1000, 4);
        CPU.swiglu(g1, up, 8, 125);
        SCALAR.swiglu(g2, up, 8, 125);
        for (int i = 0; i < 1000; i++) {
            assertEquals(g2[i], g1[i], 1e-6f * Math.max(1f, Math.abs(g2[i])));
        }

        float[] acc1 = gaussian(77, 5);
        float[] acc2 = acc1.clone();
        float[] d = gaussian(77, 6);
        CPU.add(acc1, d, 77);
        SCALAR.add(acc2, d, 77);
        assertArrayEquals(acc2, acc1);
    }

    @Test
    void attention_matchesScalarReference_forGroupedHeadsAndSeveralSlots() {
        AttentionShape shape = new AttentionShape(4, 2, 16, 0.25f);
        for (KvType kvType : KvType.values()) {
            try (KvCache cache = new KvCache(new KvLayout(1, 2, 32, shape.kvDim(), kvType))) {
                Random r = new Random(9);
                float[] k = new float[shape.kvDim()];
                float[] v = new float[shape.kvDim()];
                for (int slot = 0; slot < 2; slot++) {
                    for (int p = 0; p < 20; p++) {
                        for (int i = 0; i < k.length; i++) {
                            k[i] = (float) r.nextGaussian();
                            v[i] = (float) r.nextGaussian();
                        }
                        cache.store(0, slot, p, k, 0, v, 0);
                    }
                }
                BatchRows rows = new BatchRows(3);
                rows.add(0, 19);
                rows.add(1, 5);
                rows.add(0, 0);
                float[] q = gaussian(3 * shape.qDim(), 11);
                float[] a = new float[q.length];
                float[] b = new float[q.length];
                CPU.attention(cache, 0, shape, rows, q, a);
                SCALAR.attention(cache, 0, shape, rows, q, b);
                assertArrayEquals(b, a, 1e-5f, kvType.toString());
            }
        }
    }

    @Test
    void rope_isTheSameOnBothBackends_andRotatesNormalAndNeoxPairs() {
        float[] cos = {0.6f, 1f};
        float[] sin = {0.8f, 0f};
        float[] normal = {1f, 0f, 1f, 0f};
        float[] neox = {1f, 1f, 0f, 0f};
        CPU.rope(normal, new RopeShape(1, 4, 4, false), 1, cos, sin);
        SCALAR.rope(neox, new RopeShape(1, 4, 4, true), 1, cos, sin);
        assertArrayEquals(new float[] {0.6f, 0.8f, 1f, 0f}, normal, 1e-7f);
        assertArrayEquals(new float[] {0.6f, 1f, 0.8f, 0f}, neox, 1e-7f);
    }

    @Test
    void addBias_addsTheBiasToEveryRow_onBothBackends() {
        int width = 37;
        float[] x1 = gaussian(3 * width, 21);
        float[] x2 = x1.clone();
        float[] expected = x1.clone();
        float[] bias = gaussian(width, 22);
        for (int r = 0; r < 3; r++) {
            for (int i = 0; i < width; i++) {
                expected[r * width + i] += bias[i];
            }
        }
        CPU.addBias(x1, bias, 3, width);
        SCALAR.addBias(x2, bias, 3, width);
        assertArrayEquals(expected, x1);
        assertArrayEquals(expected, x2);
    }

    @Test
    void geglu_tableMatchesTheDirectF16Evaluation_andTheTanhGelu() {
        int n = 4000;
        float[] g1 = gaussian(n, 31);
        for (int i = 0; i < n; i += 97) {
            g1[i] *= 8f; // reach the ±10 clamps
        }
        float[] g2 = g1.clone();
        float[] x = g1.clone();
        float[] up = gaussian(n, 32);
        CPU.geglu(g1, up, 8, n / 8);
        SCALAR.geglu(g2, up, 8, n / 8);
        assertArrayEquals(g2, g1, "table lookup vs direct F16 evaluation");
        for (int i = 0; i < n; i++) {
            double v = x[i];
            double gelu = 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)));
            double expected = (v <= -10 ? 0 : gelu) * up[i];
            assertEquals(expected, g1[i], 2e-3 * Math.max(1, Math.abs(expected)), "x=" + v);
        }
    }

    @Test
    void slidingWindowAttention_matchesScalarReference_andIgnoresKeysOutsideTheWindow() {
        AttentionShape shape = new AttentionShape(2, 1, 8, 0.35f);
        try (KvCache cache = new KvCache(new KvLayout(1, 1, 32, shape.kvDim(), KvType.F32))) {
            Random r = new Random(5);
            float[] k = new float[shape.kvDim()];
            float[] v = new float[shape.kvDim()];
            for (int p = 0; p < 20; p++) {
                for (int i = 0; i < k.length; i++) {
                    k[i] = (float) r.nextGaussian();
                    v[i] = (float) r.nextGaussian();
                }
                cache.store(0, 0, p, k, 0, v, 0);
            }
            BatchRows rows = new BatchRows(2);
            rows.add(0, 19);
            rows.add(0, 3);
            float[] q = gaussian(2 * shape.qDim(), 12);
            float[] a = new float[q.length];
            float[] b = new float[q.length];
            CPU.attention(cache, 0, shape, rows, q, a, 4);
            SCALAR.attention(cache, 0, shape, rows, q, b, 4);
            assertArrayEquals(b, a, 1e-5f);
            // overwrite a key outside row 0's window (positions 16..19): nothing changes
            java.util.Arrays.fill(k, 100f);
            cache.store(0, 0, 15, k, 0, k, 0);
            float[] c = new float[q.length];
            CPU.attention(cache, 0, shape, rows, q, c, 4);
            assertArrayEquals(a, c, 0f);
            // a window wider than the position is full attention
            float[] full = new float[q.length];
            float[] wide = new float[q.length];
            CPU.attention(cache, 0, shape, rows, q, full);
            CPU.attention(cache, 0, shape, rows, q, wide, 64);
            assertArrayEquals(full, wide, 0f);
        }
    }
}
