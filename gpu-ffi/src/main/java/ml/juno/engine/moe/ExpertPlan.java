package ml.juno.engine.moe;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.model.block.GatedFfn;

/**
 * How one expert of one layer is read and laid out in a slot: its gate/up/down matrices sorted by file offset and
 * merged into runs where they are adjacent (one read for several), each run widened to the alignment. The matrices
 * land at their file offset modulo the alignment, so the layout never depends on which slot holds them.
 *
 * @param runPosition file offset of each run (aligned)
 * @param runLength   bytes of each run (aligned; may pass the end of the file)
 * @param runSlot     where each run starts in the slot
 * @param runNeed     bytes of each run that must be read (up to the end of its last matrix)
 * @param matrixSlot  where gate, up and down start in the slot
 */
record ExpertPlan(long[] runPosition, int[] runLength, int[] runSlot, int[] runNeed, long[] matrixSlot, GatedFfn mapped) {

    /** The plan for {@code mapped}, whose matrices are slices of the file mapping starting at {@code base}. */
    static ExpertPlan of(GatedFfn mapped, MemorySegment base, int align) {
        WeightMatrix[] m = {mapped.gate(), mapped.up(), mapped.down()};
        long[] off = new long[3];
        long[] span = new long[3];
        Integer[] order = {0, 1, 2};
        for (int i = 0; i < 3; i++) {
            off[i] = m[i].data().address() - base.address();
            span[i] = (m[i].rows() - 1L) * m[i].rowStride() + m[i].rowBytes();
            if (off[i] < 0 || off[i] + span[i] > base.byteSize()) {
                throw new IllegalArgumentException(m[i].name() + " is not a slice of the model file's mapping");
            }
        }
        java.util.Arrays.sort(order, (a, b) -> Long.compare(off[a], off[b]));
        long[] rp = new long[3];
        long[] re = new long[3];
        long[] need = new long[3];
        int[] runOf = new int[3];
        int runs = 0;
        for (int k : order) {
            long start = off[k] / align * align;
            long end = ceil(off[k] + span[k], align);
            if (runs > 0 && start <= re[runs - 1]) {
                re[runs - 1] = Math.max(re[runs - 1], end);
                need[runs - 1] = Math.max(need[runs - 1], off[k] + span[k] - rp[runs - 1]);
            } else {
                rp[runs] = start;
                re[runs] = end;
                need[runs] = off[k] + span[k] - start;
                runs++;
            }
            runOf[k] = runs - 1;
        }
        long[] position = new long[runs];
        int[] length = new int[runs];
        int[] slot = new int[runs];
        int[] needed = new int[runs];
        long at = 0;
        for (int r = 0; r < runs; r++) {
            position[r] = rp[r];
            length[r] = Math.toIntExact(re[r] - rp[r]);
            needed[r] = Math.toIntExact(need[r]);
            slot[r] = Math.toIntExact(at);
            at += length[r];
        }
        long[] matrixSlot = new long[3];
        for (int k = 0; k < 3; k++) {
            matrixSlot[k] = slot[runOf[k]] + (off[k] - rp[runOf[k]]);
        }
        return new ExpertPlan(position, length, slot, needed, matrixSlot, mapped);
    }

    private static long ceil(long x, int align) {
        return (x + align - 1) / align * align;
    }

    /** Bytes of a slot this expert needs. */
    long slotBytes() {
        int last = runLength.length - 1;
        return (long) runSlot[last] + runLength[last];
    }

    /** Bytes of the expert's matrices (what a fill must deliver). */
    long expertBytes() {
        return mapped.weightBytes();
    }

    /** The expert's FFN over {@code mem} (a slot filled by this plan): same names, types, shapes and strides as mapped. */
    GatedFfn over(MemorySegment mem) {
        return new GatedFfn(view(mapped.gate(), mem, matrixSlot[0]), view(mapped.up(), mem, matrixSlot[1]),
                view(mapped.down(), mem, matrixSlot[2]), mapped.activation());
    }

    private static WeightMatrix view(WeightMatrix m, MemorySegment mem, long at) {
        long span = (m.rows() - 1L) * m.rowStride() + m.rowBytes();
        return new WeightMatrix(m.name(), m.type(), mem.asSlice(at, span), m.rows(), m.cols(), m.rowStride());
    }
}
