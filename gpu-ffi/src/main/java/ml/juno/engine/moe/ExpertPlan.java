package ml.juno.engine.moe;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.model.block.GatedFfn;

/**
 * How one expert of one layer is read and laid out in a slot: its gate/up/down matrices sorted by file offset and
 * merged into runs where they are adjacent (one read for several), each run widened to the alignment. The matrices
 * land at their file offset modulo the alignment, so the layout never depends on which slot holds them.
 *
 * @param runPosition file offset of each read (aligned); a run is one read, or several when cut into pieces
 * @param runLength   bytes of each read (aligned; may pass the end of the file)
 * @param runSlot     where each read starts in the slot
 * @param runNeed     bytes of each read that must arrive (up to the end of its run's last matrix)
 * @param matrixSlot  where gate, up and down start in the slot
 */
record ExpertPlan(long[] runPosition, int[] runLength, int[] runSlot, int[] runNeed, long[] matrixSlot, GatedFfn mapped) {

    /** The plan for {@code mapped}, whose matrices are slices of the file mapping starting at {@code base}. */
    static ExpertPlan of(GatedFfn mapped, MemorySegment base, int align) {
        return of(mapped, base, align, 0);
    }

    /**
     * As {@link #of(GatedFfn, MemorySegment, int)}, each run cut into reads of at most {@code chunk} bytes (a multiple
     * of {@code align}; 0: one read per run).
     */
    static ExpertPlan of(GatedFfn mapped, MemorySegment base, int align, int chunk) {
        if (chunk < 0 || chunk % align != 0) {
            throw new IllegalArgumentException("read size " + chunk + " is not a multiple of the alignment " + align);
        }
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
        // each run cut into pieces of at most `chunk` bytes (aligned), read side by side: one expert's reads then keep
        // several requests in flight, where a single long read would leave the device's queue shallow
        int pieces = 0;
        for (int r = 0; r < runs; r++) {
            pieces += chunk == 0 ? 1 : (int) ((re[r] - rp[r] + chunk - 1) / chunk);
        }
        long[] position = new long[pieces];
        int[] length = new int[pieces];
        int[] slot = new int[pieces];
        int[] needed = new int[pieces];
        int[] runSlot = new int[runs];
        long at = 0;
        int q = 0;
        for (int r = 0; r < runs; r++) {
            runSlot[r] = Math.toIntExact(at);
            long needEnd = rp[r] + need[r];
            long step = chunk == 0 ? re[r] - rp[r] : chunk;
            for (long ps = rp[r]; ps < re[r]; ps += step) {
                long pe = Math.min(re[r], ps + step);
                position[q] = ps;
                length[q] = Math.toIntExact(pe - ps);
                needed[q] = Math.toIntExact(Math.max(0, Math.min(needEnd, pe) - ps));
                slot[q] = Math.toIntExact(at + (ps - rp[r]));
                q++;
            }
            at += re[r] - rp[r];
        }
        long[] matrixSlot = new long[3];
        for (int k = 0; k < 3; k++) {
            matrixSlot[k] = runSlot[runOf[k]] + (off[k] - rp[runOf[k]]);
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
