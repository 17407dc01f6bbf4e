package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.tensor.GgmlType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** A column slice copied contiguous ({@link WeightMatrix#compactInto}) holds the same blocks and gives the same products. */
class WeightMatrixCompactTest {

    @ParameterizedTest
    @EnumSource(value = GgmlType.class, names = {"Q4_K", "Q6_K", "Q8_0", "F16"})
    void aCompactCopyOfAColumnSlice_holdsItsBlocksAndGivesTheSameProducts(GgmlType type) {
        int rows = 48;
        int cols = 1024;
        WeightMatrix w = WeightMatrix.dense("w", type, RandomBlocks.of(type, rows, cols, 7), rows, cols);
        WeightMatrix slice = w.columnSlice(512, 256); // the third quarter of every row
        try (Arena arena = Arena.ofConfined()) {
            WeightMatrix copy = slice.compactInto(arena.allocate(slice.byteSize(), 64));
            assertEquals(slice.rowBytes(), copy.rowStride());
            assertEquals(slice.byteSize(), copy.data().byteSize());
            for (int r = 0; r < rows; r++) {
                assertEquals(-1L, slice.data().asSlice(r * slice.rowStride(), slice.rowBytes())
                        .mismatch(copy.data().asSlice(r * copy.rowStride(), copy.rowBytes())), "row " + r);
            }
            float[] x = new float[4 * 256];
            Random rnd = new Random(3);
            for (int i = 0; i < x.length; i++) {
                x[i] = (float) rnd.nextGaussian();
            }
            NativeKernels nat = NativeKernels.load().kernels();
            for (NativeKernels k : nat == null ? new NativeKernels[] {null} : new NativeKernels[] {null, nat}) {
                try (CpuBackend cpu = new CpuBackend(2, k)) {
                    for (int batch : new int[] {1, 4}) {
                        float[] a = new float[batch * rows];
                        float[] b = new float[batch * rows];
                        cpu.matmul(slice, x, a, batch);
                        cpu.matmul(copy, x, b, batch);
                        assertArrayEquals(a, b, cpu.name() + " batch " + batch);
                    }
                }
            }
        }
    }

    @Test
    void aContiguousMatrixIsItsOwnCopy_andTooSmallMemoryIsRefused() {
        WeightMatrix w = WeightMatrix.dense("w", GgmlType.Q4_K, RandomBlocks.of(GgmlType.Q4_K, 4, 512, 1), 4, 512);
        try (Arena arena = Arena.ofConfined()) {
            assertSame(w, w.compactInto(arena.allocate(w.byteSize())));
            WeightMatrix slice = w.columnSlice(256, 256);
            MemorySegment small = arena.allocate(slice.byteSize() - 1);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> slice.compactInto(small));
            assertEquals("w: " + small.byteSize() + " bytes cannot hold " + slice.byteSize(), e.getMessage());
        }
    }
}
