package ml.juno.engine.model.block;

/**
 * Combines the partial sums a tensor-parallel slice produces (attention output and FFN output, {@code [rows][width]})
 * into the full sums, in place. Contract: {@link #sum} is called twice per layer (after attention, after the FFN), in
 * the same order on every rank, with the same {@code rows} and {@code width}; on return every rank holds the same
 * element-wise sum over ranks. A whole model uses {@link #NONE}.
 */
public interface AllReduce {
    AllReduce NONE = (x, rows, width) -> { };

    void sum(float[] x, int rows, int width);
}
