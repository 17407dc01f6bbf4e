package ml.juno.engine.kernel;

import java.util.Objects;

/**
 * A low-rank matrix product {@code B·A} kept as its two factors (a LoRA pair): {@code a} is {@code [rank][in]},
 * {@code b} is {@code [out][rank]}, both row-major F32. {@link Backend#addLowRank} applies it to a batch of rows without
 * ever forming the {@code out × in} product.
 */
public record LowRank(String name, float[] a, float[] b, int rank, int in, int out) {

    public LowRank {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(a, "a");
        Objects.requireNonNull(b, "b");
        if (rank <= 0 || in <= 0 || out <= 0) {
            throw new IllegalArgumentException(name + ": bad low-rank shape: rank " + rank + ", in " + in + ", out " + out);
        }
        if (a.length != (long) rank * in || b.length != (long) out * rank) {
            throw new IllegalArgumentException(name + ": factors hold " + a.length + " and " + b.length
                    + " values, expected " + (long) rank * in + " (A " + rank + "x" + in + ") and " + (long) out * rank
                    + " (B " + out + "x" + rank + ")");
        }
    }
}
