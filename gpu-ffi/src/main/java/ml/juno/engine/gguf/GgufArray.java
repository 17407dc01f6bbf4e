package ml.juno.engine.gguf;

import java.util.List;
import java.util.Objects;

/**
 * A GGUF metadata array. {@code values} holds the elements in the narrowest Java form: {@code byte[]} for UINT8/INT8,
 * {@code short[]} for UINT16/INT16, {@code int[]} for UINT32/INT32, {@code long[]} for UINT64/INT64, {@code float[]},
 * {@code double[]}, {@code boolean[]}, {@code List<String>} for STRING and {@code List<GgufArray>} for nested ARRAY.
 * Unsigned values keep their bit pattern; the typed accessors of {@link GgufMetadata} widen them.
 */
public record GgufArray(GgufValueType elementType, Object values) {

    public GgufArray {
        Objects.requireNonNull(elementType, "elementType");
        Objects.requireNonNull(values, "values");
        boolean ok = switch (elementType) {
            case UINT8, INT8 -> values instanceof byte[];
            case UINT16, INT16 -> values instanceof short[];
            case UINT32, INT32 -> values instanceof int[];
            case UINT64, INT64 -> values instanceof long[];
            case FLOAT32 -> values instanceof float[];
            case FLOAT64 -> values instanceof double[];
            case BOOL -> values instanceof boolean[];
            case STRING, ARRAY -> values instanceof List<?>;
        };
        if (!ok) {
            throw new IllegalArgumentException("array of " + elementType + " cannot hold " + values.getClass().getSimpleName());
        }
    }

    public static GgufArray ofStrings(List<String> strings) {
        return new GgufArray(GgufValueType.STRING, List.copyOf(strings));
    }

    public static GgufArray ofInts(int[] values) {
        return new GgufArray(GgufValueType.INT32, values.clone());
    }

    public static GgufArray ofFloats(float[] values) {
        return new GgufArray(GgufValueType.FLOAT32, values.clone());
    }

    /** Number of elements. */
    public int size() {
        return switch (values) {
            case byte[] a -> a.length;
            case short[] a -> a.length;
            case int[] a -> a.length;
            case long[] a -> a.length;
            case float[] a -> a.length;
            case double[] a -> a.length;
            case boolean[] a -> a.length;
            case List<?> l -> l.size();
            default -> throw new IllegalStateException();
        };
    }

    /** Element {@code i} as a long (integer element types, unsigned ones widened), for readers and formatters. */
    public long longAt(int i) {
        return switch (elementType) {
            case UINT8 -> ((byte[]) values)[i] & 0xFFL;
            case INT8 -> ((byte[]) values)[i];
            case UINT16 -> ((short[]) values)[i] & 0xFFFFL;
            case INT16 -> ((short[]) values)[i];
            case UINT32 -> ((int[]) values)[i] & 0xFFFF_FFFFL;
            case INT32 -> ((int[]) values)[i];
            case UINT64, INT64 -> ((long[]) values)[i];
            case BOOL -> ((boolean[]) values)[i] ? 1 : 0;
            default -> throw new IllegalStateException("not an integer array: " + elementType);
        };
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufArray(GgufValueType t, Object v) && t == elementType && GgufValues.deepEquals(values, v);
    }

    @Override
    public int hashCode() {
        return 31 * elementType.hashCode() + GgufValues.deepHash(values);
    }

    @Override
    public String toString() {
        return "GgufArray[" + elementType + " x " + size() + "]";
    }
}
