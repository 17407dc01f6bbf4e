package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The native kernels against the Java backend, every variant this CPU runs, every weight type: bit for bit, for odd
 * row counts and widths, batches 1 to 130, random and extreme blocks. Q4_0 here in its stored layout; repacked it has
 * numerics of its own (PackedLanesTest).
 */
class NativeKernelsTest {
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final GgmlType[] TYPES = {GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q4_0, GgmlType.Q4_1,
            GgmlType.Q5_0, GgmlType.Q5_1, GgmlType.Q8_0, GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K,
            GgmlType.Q6_K};
    private static final int[] BATCHES = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15, 16, 17, 31, 33, 64, 127, 128, 130};
    private static final CpuBackend JAVA = new CpuBackend(2, null);
    private static final List<CpuBackend> OPEN = new ArrayList<>();

    @AfterAll
    static void close() {
        JAVA.close();
        OPEN.forEach(CpuBackend::close);
    }

    /** A native library must be there wherever a C compiler was (the build compiles it); elsewhere Java says why. */
    @Test
    void theLibraryLoads_whereverTheBuildHadACompiler() throws Exception {
        NativeKernels.Loaded l = NativeKernels.load();
        boolean linuxX64 = System.getProperty("os.name").toLowerCase().contains("linux")
                && System.getProperty("os.arch").equals("amd64");
        if (linuxX64 && compilerPresent() && !"0".equals(System.getenv("JUNO_NATIVE"))) {
            assertTrue(l.ok(), "a C compiler is on this machine, yet: " + l.problem());
            assertFalse(NativeKernels.runnableVariants().isEmpty());
            assertEquals(l.kernels().isa(), NativeKernels.runnableVariants().get(0), "the best variant is chosen");
        } else {
            assertFalse(l.ok());
            assertNotNull(l.problem());
            assertEquals("java", Backends.select(Backends.Kind.NATIVE, 1).kind(), "falls back to Java");
        }
    }

    private static boolean compilerPresent() {
        try {
            Process p = new ProcessBuilder("gcc", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void backendKinds_parseAndRefuseUnknownNames() {
        assertEquals(Backends.Kind.NATIVE, Backends.Kind.parse("Native"));
        assertEquals(Backends.Kind.JAVA, Backends.Kind.parse("java"));
        assertEquals(Backends.Kind.AUTO, Backends.Kind.parse(null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Backends.Kind.parse("cuda"));
        assertTrue(e.getMessage().contains("native or java"), e.getMessage());
        try (Backend j = Backends.select(Backends.Kind.JAVA, 1)) {
            assertEquals("java", j.kind());
        }
    }

    /** No variant runs here (no library): the comparisons check the fallback instead. */
    private static final String NONE = "no-native-library";

    static Stream<Arguments> variantsAndTypes() {
        List<Arguments> out = new ArrayList<>();
        List<String> variants = NativeKernels.runnableVariants();
        for (String isa : variants.isEmpty() ? List.of(NONE) : variants) {
            for (GgmlType t : TYPES) {
                out.add(Arguments.of(isa, t));
            }
        }
        return out.stream();
    }

    /** Without a library, asking for native must give the Java kernels; returns whether that case applied. */
    private static boolean fallbackOnly(String isa) {
        if (!isa.equals(NONE)) {
            return false;
        }
        assertFalse(NativeKernels.load().ok());
        try (Backend b = Backends.select(Backends.Kind.NATIVE, 1)) {
            assertEquals("java", b.kind());
        }
        return true;
    }

    private static CpuBackend nativeBackend(String isa) {
        NativeKernels.Loaded l = NativeKernels.variant(isa);
        assertTrue(l.ok(), isa + ": " + l.problem());
        CpuBackend b = new CpuBackend(2, l.kernels(), false);
        synchronized (OPEN) {
            OPEN.add(b);
        }
        return b;
    }

    /** Widths: a block type's smallest odd multiple and a larger one (floats: multiples of 16). */
    private static int[] widths(GgmlType t) {
        return t.blockSize == 256 ? new int[] {256, 768} : t.blockSize == 32 ? new int[] {96, 544} : new int[] {48, 528};
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("variantsAndTypes")
    void randomBlocks_areBitIdenticalToTheJavaBackend_atEveryBatchSize(String isa, GgmlType t) {
        if (fallbackOnly(isa)) {
            return;
        }
        CpuBackend nat = nativeBackend(isa);
        int rows = 37;
        for (int cols : widths(t)) {
            MemorySegment w = RandomBlocks.of(t, rows, cols, 1000 + cols);
            WeightMatrix m = WeightMatrix.dense("w", t, w, rows, cols);
            for (int batch : BATCHES) {
                compare(nat, m, RandomBlocks.activations(batch * cols, 7L * batch + cols), batch, isa + " " + t + " " + cols + " cols");
            }
        }
    }

    /**
     * Extreme blocks: every quant and scale bit set (largest quants, largest sub-block scales), then all clear, with
     * block scales of 1 and of the largest F16 (results overflow to infinities: both must agree), against activations
     * that quantize to ±127 everywhere.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("variantsAndTypes")
    void extremeBlocks_areBitIdenticalToTheJavaBackend(String isa, GgmlType t) {
        if (fallbackOnly(isa)) {
            return;
        }
        if (t.blockSize == 1) {
            return; // plain floats have no block structure; the random test covers them
        }
        CpuBackend nat = nativeBackend(isa);
        int cols = t.blockSize == 256 ? 512 : 64;
        int rows = 6;
        long rowBytes = t.byteSize(cols);
        MemorySegment w = Arena.ofAuto().allocate(rows * rowBytes, 64);
        for (int r = 0; r < rows; r++) {
            byte fill = (byte) (r % 3 == 0 ? 0xFF : r % 3 == 1 ? 0x00 : 0xA5);
            for (long i = 0; i < rowBytes; i++) {
                w.set(ValueLayout.JAVA_BYTE, r * rowBytes + i, fill);
            }
            float scale = r < 3 ? 1f : 65504f;
            for (long b = 0; b < cols / t.blockSize; b++) {
                for (int f : RandomBlocks.halfFields(t)) {
                    w.set(U16, r * rowBytes + b * t.typeSize + f, Float.floatToFloat16(scale));
                }
            }
        }
        WeightMatrix m = WeightMatrix.dense("w", t, w, rows, cols);
        for (int batch : new int[] {1, 3, 4, 5, 9}) {
            float[] x = new float[batch * cols];
            for (int i = 0; i < x.length; i++) {
                int row = i / cols;
                x[i] = row % 3 == 0 ? 1f : row % 3 == 1 ? -1f : (i % 2 == 0 ? 3f : -3f);
            }
            compare(nat, m, x, batch, isa + " " + t + " extreme");
        }
    }

    private static void compare(CpuBackend nat, WeightMatrix m, float[] x, int batch, String what) {
        float[] expected = new float[batch * m.rows()];
        float[] actual = new float[batch * m.rows()];
        JAVA.matmul(m, x.clone(), expected, batch);
        nat.matmul(m, x.clone(), actual, batch);
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToIntBits(expected[i]) != Float.floatToIntBits(actual[i])) {
                fail(what + ", batch " + batch + ": row " + (i % m.rows()) + " of activation " + (i / m.rows())
                        + ": Java " + expected[i] + ", native " + actual[i]);
            }
        }
    }

    /** Every size is checked before the downcall: a bad call is a Java exception, never a native crash. */
    @Test
    void badSizes_areRefusedBeforeTheDowncall() {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            assertEquals("java", Backends.select(Backends.Kind.NATIVE, 1).kind(), "no library: the Java kernels run");
            return;
        }
        NativeKernels k = l.kernels();
        GgmlType t = GgmlType.Q4_0;
        WeightMatrix m = WeightMatrix.dense("w", t, RandomBlocks.of(t, 8, 64, 1), 8, 64);
        MemorySegment xq = Arena.ofAuto().allocate(NativeKernels.activationBytes(t, 2, 64));
        k.quantize(t, floats(128), 2, 64, xq);
        k.matmul(m, xq, 2, floats(16), 0, 8);
        assertThrows(IllegalArgumentException.class, () -> k.quantize(t, floats(127), 2, 64, xq), "short input");
        assertThrows(IllegalArgumentException.class, () -> k.quantize(t, floats(192), 3, 64, xq), "short buffer");
        assertThrows(IllegalArgumentException.class, () -> k.matmul(m, xq, 2, floats(15), 0, 8), "short output");
        assertThrows(IllegalArgumentException.class, () -> k.matmul(m, xq, 3, floats(24), 0, 8), "short activations");
        assertThrows(IllegalArgumentException.class, () -> k.matmul(m, xq, 2, floats(16), 0, 9), "rows past the end");
        assertThrows(IllegalArgumentException.class, () -> k.matmul(m, xq, 2, floats(16), 5, 4), "reversed range");
        assertThrows(IllegalArgumentException.class, () -> k.quantize(GgmlType.IQ4_NL, floats(64), 2, 32, xq));
        assertThrows(IllegalArgumentException.class, () -> k.quantizeRows(t, false, floats(128), 2, 64, xq, 1, 3), "rows past the batch");
        assertThrows(IllegalArgumentException.class, () -> k.quantizeRows(t, false, floats(128), 2, 64, xq, 2, 1), "reversed rows");
        // attention: positions outside the cache, short query or score buffers
        MemorySegment keys = Arena.ofAuto().allocate(2L * 4 * 64);
        MemorySegment off = MemorySegment.ofArray(new long[] {0, 64, 128, 192});
        k.attentionScores(keys, off, 0, 3, 0, floats(64), 0, 64, 1, 64, 1f, floats(4), 4);
        assertThrows(IllegalArgumentException.class, () -> k.attentionScores(keys, MemorySegment.ofArray(new long[] {0, 64, 128, 193}),
                0, 3, 0, floats(64), 0, 64, 1, 64, 1f, floats(4), 4), "a position past the cache");
        assertThrows(IllegalArgumentException.class, () -> k.attentionScores(keys, off, 0, 3, 0, floats(64), 1, 64, 1, 64, 1f, floats(4), 4),
                "short query");
        assertThrows(IllegalArgumentException.class, () -> k.attentionValues(keys, off, 0, 3, 0, floats(3), 3, floats(1), 1, floats(64), 0, 64, 64),
                "short scores");
        assertThrows(IllegalArgumentException.class, () -> k.attentionScores(keys, off, 0, 3, 0, floats(128), 0, 32, 2, 64, 1f,
                floats(8), 4), "two heads' queries overlapping");
    }

    private static MemorySegment floats(int n) {
        return MemorySegment.ofArray(new float[n]);
    }

    /** The native path allocates nothing per product once its buffers exist (no heap segment per call). */
    @Test
    void nativeProducts_allocateNothingPerCall() {
        NativeKernels.Loaded l = NativeKernels.load();
        if (!l.ok()) {
            assertEquals("java", Backends.select(Backends.Kind.NATIVE, 1).kind());
            return;
        }
        var mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        try (CpuBackend nat = new CpuBackend(1, l.kernels())) {
            WeightMatrix w = WeightMatrix.dense("w", GgmlType.Q4_K, RandomBlocks.of(GgmlType.Q4_K, 64, 512, 1), 64, 512);
            float[] x = new float[2 * 512];
            float[] out = new float[2 * 64];
            for (int i = 0; i < 20_000; i++) {
                nat.matmul(w, x, out, 2);
            }
            long a0 = mx.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 1000; i++) {
                nat.matmul(w, x, out, 2);
            }
            long perCall = (mx.getCurrentThreadAllocatedBytes() - a0) / 1000;
            assertTrue(perCall < 16, perCall + " bytes allocated per native product");
        }
    }

}
