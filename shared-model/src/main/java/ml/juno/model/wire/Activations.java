package ml.juno.model.wire;

import java.nio.ByteOrder;
import java.util.Objects;

/**
 * A row-major {@code [rows, cols]} float matrix as it travels (hidden states between stages, logits, all-reduce partial
 * sums): encoded in {@code dtype} and {@code order}, exactly {@code dtype.encodedBytes(rows, cols)} bytes (checked
 * once, here). The node's runtime and the coordinator's executors hold these; {@code ProtoMapping} alone turns them
 * into the wire's {@code Tensor} and back, without copying on the way out. The bytes are not copied: whoever makes one
 * hands its array over and never writes it again.
 */
public record Activations(ActivationDtype dtype, ByteOrder order, int rows, int cols, byte[] data) {
    public Activations {
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(order, "order");
        if (rows < 0 || cols < 0) {
            throw new IllegalArgumentException("negative shape [" + rows + ", " + cols + "]");
        }
        long expected = dtype.encodedBytes(rows, cols);
        if (data.length != expected) {
            throw new IllegalArgumentException(dtype + " tensor [" + rows + ", " + cols + "] needs " + expected
                    + " bytes, got " + data.length);
        }
    }

    /** {@code src[offset .. offset + rows*cols)} encoded by {@code codec}. */
    public static Activations encode(ActivationCodec codec, float[] src, int offset, int rows, int cols) {
        return new Activations(codec.dtype(), codec.order(), rows, cols, codec.encode(src, offset, rows, cols));
    }

    /** Decodes into {@code dst[offset .. offset + rows*cols)}. */
    public void decode(float[] dst, int offset) {
        ActivationCodec.of(dtype, order).decode(data, rows, cols, dst, offset);
    }

    /** True when the shape is {@code [rows, cols]}. */
    public boolean hasShape(int rows, int cols) {
        return this.rows == rows && this.cols == cols;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Activations a && a.dtype == dtype && a.order.equals(order) && a.rows == rows && a.cols == cols
                && java.util.Arrays.equals(a.data, data);
    }

    @Override
    public int hashCode() {
        return (dtype.hashCode() * 31 + rows) * 31 + cols;
    }

    @Override
    public String toString() {
        return "Activations[" + dtype + " " + order + " [" + rows + ", " + cols + "], " + data.length + " bytes]";
    }
}
