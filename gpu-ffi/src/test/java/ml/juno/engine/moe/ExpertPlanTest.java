package ml.juno.engine.moe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.model.block.GatedFfn;
import org.junit.jupiter.api.Test;

/**
 * An expert's reads: adjacent matrices merged into one run, runs widened to the alignment, and (with a read size)
 * each run cut into pieces that cover it exactly, in order, each no longer than the read size, the last bytes of a run
 * needed only up to its last matrix; the matrices' places in the slot do not depend on the cutting.
 */
class ExpertPlanTest {
    private static final int ALIGN = 4096;

    /** Gate and up adjacent at 10,000 (two runs in all with down far away at 200,000); F32 rows of 64 floats. */
    private static GatedFfn ffn(MemorySegment file) {
        WeightMatrix gate = new WeightMatrix("gate", GgmlType.F32, file.asSlice(10_000, 40 * 256), 40, 64, 256);
        WeightMatrix up = new WeightMatrix("up", GgmlType.F32, file.asSlice(10_000 + 40 * 256, 40 * 256), 40, 64, 256);
        WeightMatrix down = new WeightMatrix("down", GgmlType.F32, file.asSlice(200_000, 64 * 160), 64, 40, 160);
        return new GatedFfn(gate, up, down, GatedFfn.Activation.SILU);
    }

    @Test
    void piecesCoverEachRunExactly_andTheLayoutDoesNotDependOnThem() {
        try (Arena a = Arena.ofConfined()) {
            MemorySegment file = a.allocate(300_000, ALIGN);
            GatedFfn f = ffn(file);
            ExpertPlan whole = ExpertPlan.of(f, file, ALIGN);
            assertEquals(2, whole.runPosition().length, "gate+up merged, down alone");
            for (int chunk : new int[] {ALIGN, 2 * ALIGN, 3 * ALIGN, 1 << 20}) {
                ExpertPlan cut = ExpertPlan.of(f, file, ALIGN, chunk);
                assertArrayEquals(whole.matrixSlot(), cut.matrixSlot(), "matrices in the same places, read size " + chunk);
                assertEquals(whole.slotBytes(), cut.slotBytes());
                int q = 0;
                for (int r = 0; r < whole.runPosition().length; r++) {
                    long pos = whole.runPosition()[r];
                    long slot = whole.runSlot()[r];
                    long end = pos + whole.runLength()[r];
                    long needEnd = pos + whole.runNeed()[r];
                    while (pos < end) {
                        assertEquals(pos, cut.runPosition()[q], "piece " + q + " starts where the last ended");
                        assertEquals(slot, cut.runSlot()[q]);
                        assertEquals(0, cut.runPosition()[q] % ALIGN);
                        assertTrue(cut.runLength()[q] <= chunk && cut.runLength()[q] % ALIGN == 0);
                        long pe = pos + cut.runLength()[q];
                        assertEquals(Math.max(0, Math.min(needEnd, pe) - pos), cut.runNeed()[q], "bytes needed of piece " + q);
                        slot += cut.runLength()[q];
                        pos = pe;
                        q++;
                    }
                    assertEquals(end, pos, "run " + r + " covered exactly");
                }
                assertEquals(q, cut.runPosition().length, "no piece beyond the runs");
                if (chunk < whole.runLength()[0]) {
                    assertTrue(cut.runPosition().length > whole.runPosition().length, "cut into more reads at " + chunk);
                }
            }
            assertThrows(IllegalArgumentException.class, () -> ExpertPlan.of(f, file, ALIGN, 1000), "not aligned");
        }
    }
}
