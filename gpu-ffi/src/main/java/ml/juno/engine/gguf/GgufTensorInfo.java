package ml.juno.engine.gguf;

import java.util.Arrays;
import java.util.Objects;
import ml.juno.engine.tensor.GgmlType;

/**
 * One entry of the GGUF tensor table.
 *
 * @param name   tensor name, e.g. {@code blk.0.attn_q.weight}
 * @param type   element type
 * @param shape  dimensions in ggml order: {@code shape[0]} (ne0) is the contiguous row length; 1 to 4 entries
 * @param offset byte offset of the data relative to {@link GgufFile#dataOffset()}
 */
public record GgufTensorInfo(String name, GgmlType type, long[] shape, long offset) {

    /** ggml's GGML_MAX_DIMS. */
    public static final int MAX_DIMS = 4;

    public GgufTensorInfo {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(shape, "shape");
        if (shape.length < 1 || shape.length > MAX_DIMS) {
            throw new IllegalArgumentException(name + ": " + shape.length + " dimensions, expected 1.." + MAX_DIMS);
        }
        shape = shape.clone();
        long n = 1;
        for (long d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException(name + ": negative dimension in " + Arrays.toString(shape));
            }
            n = Math.multiplyExact(n, d);
        }
        if (shape[0] % type.blockSize != 0) {
            throw new IllegalArgumentException(name + ": row length " + shape[0] + " is not a multiple of the "
                    + type + " block size " + type.blockSize);
        }
        type.byteSize(n); // overflow check
        if (offset < 0) {
            throw new IllegalArgumentException(name + ": negative offset " + offset);
        }
    }

    /** The dimensions (a copy), ggml order. */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /** Dimension {@code i} (ne_i); 1 for {@code i >= dims()}, as in ggml. */
    public long dim(int i) {
        return i < shape.length ? shape[i] : 1;
    }

    public int dims() {
        return shape.length;
    }

    public long elementCount() {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /** Bytes of tensor data. */
    public long byteSize() {
        return type.byteSize(elementCount());
    }

    /** ne0: elements per row. */
    public long rowLength() {
        return shape[0];
    }

    /** Product of ne1..: number of rows. */
    public long rowCount() {
        long n = 1;
        for (int i = 1; i < shape.length; i++) {
            n *= shape[i];
        }
        return n;
    }

    /** Bytes of one row. */
    public long rowBytes() {
        return type.byteSize(shape[0]);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufTensorInfo t && t.name.equals(name) && t.type == type && Arrays.equals(t.shape, shape)
                && t.offset == offset;
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, type, Arrays.hashCode(shape), offset);
    }

    @Override
    public String toString() {
        return name + " " + type + " " + Arrays.toString(shape) + " @" + offset;
    }
}
