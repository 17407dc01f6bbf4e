package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import ml.juno.engine.kernel.HugeMemory;
import ml.juno.engine.kernel.Libc;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Weights copied out of their file mapping into huge pages ({@link ResidentWeights}): the same bytes and products, each
 * matrix copied once, only mapped matrices, never past the budget, and the switch that keeps them mapped.
 */
class ResidentWeightsTest {
    private static final int ROWS = 96;
    private static final int COLS = 1024;

    /** Two Q4_K matrices written to a file and mapped back, as a GGUF file's tensors are. */
    private static MemorySegment mappedFile(Path dir, Arena arena) throws IOException {
        MemorySegment a = RandomBlocks.of(GgmlType.Q4_K, ROWS, COLS, 11);
        MemorySegment b = RandomBlocks.of(GgmlType.Q4_K, ROWS, COLS, 12);
        Path f = dir.resolve("weights.bin");
        byte[] bytes = new byte[(int) (a.byteSize() + b.byteSize())];
        MemorySegment.copy(a, 0, MemorySegment.ofArray(bytes), 0, a.byteSize());
        MemorySegment.copy(b, 0, MemorySegment.ofArray(bytes), a.byteSize(), b.byteSize());
        Files.write(f, bytes);
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            return ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size(), arena);
        }
    }

    private static WeightMatrix matrix(MemorySegment file, int index) {
        long bytes = GgmlType.Q4_K.byteSize(COLS) * ROWS;
        return WeightMatrix.dense("w" + index, GgmlType.Q4_K, file.asSlice(index * bytes, bytes).asReadOnly(), ROWS, COLS);
    }

    @Test
    void aMappedMatrix_isCopiedOnce_withTheSameBytes_andAnUnmappedOneIsLeft(@TempDir Path dir) throws IOException {
        try (Arena arena = Arena.ofShared(); ResidentWeights r = new ResidentWeights(true, 1L << 30)) {
            MemorySegment file = mappedFile(dir, arena);
            WeightMatrix w = matrix(file, 0);
            assertTrue(w.data().isMapped(), "a slice of a mapping is mapped");
            WeightMatrix copy = r.of(w);
            assertNotSame(w, copy);
            assertFalse(copy.data().isMapped());
            assertEquals(-1L, w.data().mismatch(copy.data()), "the same bytes");
            assertEquals(w.rows(), copy.rows());
            assertEquals(w.rowStride(), copy.rowStride());
            assertEquals(0, copy.data().address() % 64, "64-byte aligned");
            assertSame(copy, r.of(w), "copied once");
            assertSame(copy, r.of(copy), "a copy is not mapped: left as it is");
            assertEquals(w.byteSize(), r.copiedBytes());

            WeightMatrix heap = WeightMatrix.dense("heap", GgmlType.Q4_K, RandomBlocks.of(GgmlType.Q4_K, ROWS, COLS, 5), ROWS, COLS);
            assertSame(heap, r.of(heap), "memory that is not a file mapping is not copied");
            assertEquals(w.byteSize(), r.copiedBytes());
        }
    }

    @Test
    void pastTheBudget_matricesStayInTheMapping(@TempDir Path dir) throws IOException {
        try (Arena arena = Arena.ofShared()) {
            MemorySegment file = mappedFile(dir, arena);
            WeightMatrix first = matrix(file, 0);
            WeightMatrix second = matrix(file, 1);
            try (ResidentWeights r = new ResidentWeights(true, first.byteSize() + 100)) {
                assertNotSame(first, r.of(first));
                assertSame(second, r.of(second), "does not fit what is left");
                assertSame(second, r.of(second), "asked again: still mapped");
                assertEquals(first.byteSize(), r.copiedBytes());
            }
            try (ResidentWeights off = new ResidentWeights(false, 1L << 30)) {
                assertSame(first, off.of(first), "switched off: nothing copied");
                assertEquals(0, off.copiedBytes());
                assertEquals(0, off.packedMemory(4096).address() % 64, "packed copies still get their memory");
            }
            try (ResidentWeights machine = ResidentWeights.forThisMachine()) {
                // no huge pages: reading the mapping is faster than 4 KiB copies
                boolean copies = HugeMemory.available() && !ResidentWeights.switchedOff();
                assertEquals(copies, machine.of(first) != first, "huge pages " + HugeMemory.available());
            }
        }
    }

    @Test
    void theBackend_multipliesTheCopy_toTheSameResultsBitForBit(@TempDir Path dir) throws IOException {
        NativeKernels nat = NativeKernels.load().kernels();
        try (Arena arena = Arena.ofShared()) {
            MemorySegment file = mappedFile(dir, arena);
            WeightMatrix w = matrix(file, 0);
            float[] x = new float[4 * COLS];
            Random rnd = new Random(9);
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) rnd.nextGaussian();
            }
            float[][] out = new float[2][];
            long[] copied = new long[2];
            for (int on = 0; on < 2; on++) {
                String before = System.getProperty(ResidentWeights.PROPERTY);
                System.setProperty(ResidentWeights.PROPERTY, on == 1 ? "true" : "0");
                // weights as stored (the AVX-512 variant would multiply a packed copy of Q4_K instead)
                try (CpuBackend cpu = new CpuBackend(2, nat, false)) {
                    out[on] = new float[4 * ROWS];
                    for (int batch : new int[] {1, 4}) {
                        cpu.matmul(w, x, out[on], batch);
                    }
                    copied[on] = cpu.residentBytes();
                } finally {
                    if (before == null) {
                        System.clearProperty(ResidentWeights.PROPERTY);
                    } else {
                        System.setProperty(ResidentWeights.PROPERTY, before);
                    }
                }
            }
            assertArrayEquals(out[0], out[1], "the copy gives the mapping's products");
            assertEquals(0, copied[0], "switched off");
            boolean expected = nat != null && HugeMemory.available();
            assertEquals(expected ? w.byteSize() : 0, copied[1], "native kernels " + (nat != null) + ", huge pages " + HugeMemory.available());
        }
    }

    @Test
    void theSwitch_andTheBudget() {
        String before = System.getProperty(ResidentWeights.PROPERTY);
        try {
            for (String off : new String[] {"0", "false", "OFF", " no "}) {
                System.setProperty(ResidentWeights.PROPERTY, off);
                assertTrue(ResidentWeights.switchedOff(), off);
            }
            for (String on : new String[] {"1", "true", "yes"}) {
                System.setProperty(ResidentWeights.PROPERTY, on);
                assertFalse(ResidentWeights.switchedOff(), on);
            }
        } finally {
            if (before == null) {
                System.clearProperty(ResidentWeights.PROPERTY);
            } else {
                System.setProperty(ResidentWeights.PROPERTY, before);
            }
        }
        long gib = 1L << 30;
        assertEquals(8 * gib - 8 * gib / 10, ResidentWeights.budget(8 * gib), "a tenth kept back");
        assertEquals(gib - (512L << 20), ResidentWeights.budget(gib), "at least 512 MiB kept back");
        assertTrue(ResidentWeights.budget(100L << 20) < 0, "nothing to copy into");
        if (Libc.linux()) {
            long avail = ResidentWeights.availableBytes();
            assertTrue(avail > 0 && avail < Long.MAX_VALUE / 2, "MemAvailable read: " + avail);
        }
    }

    @Test
    void regions_handOutAlignedDisjointMemory_acrossRegionsAndLargerThanOne() {
        try (HugeMemory.Regions r = new HugeMemory.Regions(HugeMemory.PAGE)) {
            MemorySegment[] s = new MemorySegment[6];
            long[] sizes = {100, 1_000_000, 1_500_000, 5L << 20, 64, 3};
            long total = 0;
            for (int i = 0; i < s.length; i++) {
                s[i] = r.allocate(sizes[i]);
                total += sizes[i];
                assertEquals(sizes[i], s[i].byteSize());
                assertEquals(0, s[i].address() % 64);
                s[i].fill((byte) (i + 1));
            }
            for (int i = 0; i < s.length; i++) {
                for (int j = 0; j < s.length; j++) {
                    boolean apart = s[i].address() + s[i].byteSize() <= s[j].address() || s[j].address() + s[j].byteSize() <= s[i].address();
                    assertTrue(i == j || apart, i + " and " + j + " overlap");
                }
                assertEquals(i + 1, s[i].get(java.lang.foreign.ValueLayout.JAVA_BYTE, s[i].byteSize() - 1));
            }
            assertEquals(total, r.bytes());
        }
    }
}
