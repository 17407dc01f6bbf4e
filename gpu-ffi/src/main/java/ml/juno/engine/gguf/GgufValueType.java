package ml.juno.engine.gguf;

/**
 * The GGUF metadata value types, in on-disk id order (GGUF spec, "gguf_metadata_value_type"): the ordinal is
 * the id stored in the file.
 */
public enum GgufValueType {
    UINT8(1),
    INT8(1),
    UINT16(2),
    INT16(2),
    UINT32(4),
    INT32(4),
    FLOAT32(4),
    BOOL(1),
    STRING(-1),
    ARRAY(-1),
    UINT64(8),
    INT64(8),
    FLOAT64(8);

    private static final GgufValueType[] VALUES = values();

    /** Bytes of one value on disk, or -1 for the variable-length STRING and ARRAY. */
    public final int fixedSize;

    GgufValueType(int fixedSize) {
        this.fixedSize = fixedSize;
    }

    /** The id stored in the file. */
    public int id() {
        return ordinal();
    }

    /** The type with this id, or {@code null} when the id is unknown. */
    public static GgufValueType fromId(long id) {
        return id >= 0 && id < VALUES.length ? VALUES[(int) id] : null;
    }

    /** Whether values of this type are integers (signed or unsigned, any width). */
    public boolean isInteger() {
        return switch (this) {
            case UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64 -> true;
            default -> false;
        };
    }

    /** Whether values of this type are floats. */
    public boolean isFloat() {
        return this == FLOAT32 || this == FLOAT64;
    }

    /** The fewest bytes one value of this type can take on disk (a string or array header for the variable types). */
    int minSize() {
        return switch (this) {
            case STRING -> 8;      // u64 length
            case ARRAY -> 12;      // u32 element type + u64 count
            default -> fixedSize;
        };
    }
}
