package ml.juno.engine.gguf;

import java.util.Objects;

/**
 * One typed metadata value. Scalars are boxed in their on-disk width ({@code Byte} for UINT8/INT8, {@code Short},
 * {@code Integer}, {@code Long}, {@code Float}, {@code Double}, {@code Boolean}, {@code String}); unsigned values keep
 * their bit pattern. Arrays are {@link GgufArray}.
 */
record GgufValue(GgufValueType type, Object value) {

    GgufValue {
        Objects.requireNonNull(type, "type");
        Objects.requireNonNull(value, "value");
        boolean ok = switch (type) {
            case UINT8, INT8 -> value instanceof Byte;
            case UINT16, INT16 -> value instanceof Short;
            case UINT32, INT32 -> value instanceof Integer;
            case UINT64, INT64 -> value instanceof Long;
            case FLOAT32 -> value instanceof Float;
            case FLOAT64 -> value instanceof Double;
            case BOOL -> value instanceof Boolean;
            case STRING -> value instanceof String;
            case ARRAY -> value instanceof GgufArray;
        };
        if (!ok) {
            throw new IllegalArgumentException(type + " value cannot be a " + value.getClass().getSimpleName());
        }
    }

    /** The value as a long, for the integer types (unsigned widened). */
    long asLong(String key) {
        long v = switch (type) {
            case UINT8 -> (Byte) value & 0xFFL;
            case INT8 -> (Byte) value;
            case UINT16 -> (Short) value & 0xFFFFL;
            case INT16 -> (Short) value;
            case UINT32 -> (Integer) value & 0xFFFF_FFFFL;
            case INT32 -> (Integer) value;
            case UINT64, INT64 -> (Long) value;
            default -> throw GgufMetadata.wrongType(key, type, "integer");
        };
        if (type == GgufValueType.UINT64 && v < 0) {
            throw new IllegalArgumentException("key " + key + " is UINT64 " + Long.toUnsignedString(v) + ", out of range for a long");
        }
        return v;
    }
}
