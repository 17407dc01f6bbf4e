package ml.juno.engine.model.block;

/**
 * Combines the partial sums a tensor-parallel slice produces (attention output and FFN output, {@code [rows][width]})
 * into the full sums, in place. A whole model uses {@link #NONE}.
 */
public interface AllReduce {
    AllReduce NONE = (x, rows, width) -> { };

    void sum(float[] x, int rows, int width);
}
