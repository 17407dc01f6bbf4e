package ml.juno.model.wire;

/** How activations travel between nodes: full floats, halves, or int8 with one float scale per row. */
public enum ActivationDtype {
    FLOAT32,
    FLOAT16,
    INT8;

    /** Bytes needed for {@code rows × cols} values, including INT8's per-row scales. */
    public long encodedBytes(int rows, int cols) {
        return switch (this) {
            case FLOAT32 -> 4L * rows * cols;
            case FLOAT16 -> 2L * rows * cols;
            case INT8 -> (long) rows * (4L + cols);
        };
    }

    /** Parses a CLI/env value case-insensitively; the message lists the valid names. */
    public static ActivationDtype parse(String s) {
        for (ActivationDtype d : values()) {
            if (d.name().equalsIgnoreCase(s)) {
                return d;
            }
        }
        throw new IllegalArgumentException("unknown activation dtype '" + s + "' (expected FLOAT32, FLOAT16 or INT8)");
    }
}
