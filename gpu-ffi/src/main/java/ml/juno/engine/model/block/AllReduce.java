package ml.juno.engine.model.block;

/**
 * Combines the partial sums a tensor-parallel slice produces (attention output and FFN output, {@code [rows][width]})
 * into the full sums, in place, and gathers the output head's vocabulary slices. Contract: {@link #sum} is called twice
 * per layer (after attention, after the FFN), in the same order on every rank, with the same {@code rows} and
 * {@code width}; on return every rank holds the same element-wise sum over ranks. A step that asks for logits then
 * calls {@link #gatherColumns} once on every rank. A whole model uses {@link #NONE}.
 */
public interface AllReduce {
    AllReduce NONE = (x, rows, width) -> { };

    void sum(float[] x, int rows, int width);

    /**
     * The output head's columns, each rank holding a contiguous slice of the vocabulary (rank order: rank {@code r}'s
     * slice starts where rank {@code r-1}'s ends). On entry {@code x[0, rows·width)} holds this rank's columns {@code
     * [from, from+width)} of {@code rows} rows, row after row; on return {@code x[0, rows·total)} holds every rank's
     * columns, rows of {@code total}, exactly (no rounding on the way) and the same on every rank.
     *
     * @throws UnsupportedOperationException this hook has no peers to gather from and the slice is not the whole row
     */
    default void gatherColumns(float[] x, int rows, int total, int from, int width) {
        if (from != 0 || width != total) {
            throw new UnsupportedOperationException("columns [" + from + ", " + (from + width) + ") of " + total
                    + " need the other tensor-parallel ranks' slices, and this all-reduce has no peers");
        }
    }

    /**
     * Moves a block of {@code rows} rows of {@code width} at the start of {@code x} to columns {@code [from,
     * from+width)} of rows of {@code total}, in place (the last row first, so no row overwrites one not yet moved); the
     * other columns are left as they were.
     */
    static void spreadRows(float[] x, int rows, int total, int from, int width) {
        for (int i = rows - 1; i >= 0; i--) {
            System.arraycopy(x, i * width, x, i * total + from, width);
        }
    }
}
