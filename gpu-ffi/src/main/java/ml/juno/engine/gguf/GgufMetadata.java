package ml.juno.engine.gguf;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The key/value metadata of a GGUF file, in file order, with typed accessors. A missing key or a value of the wrong
 * type gets an {@link IllegalArgumentException} that names the key and both types; the accessors with a default
 * return it only when the key is absent, never when it has the wrong type.
 */
public final class GgufMetadata {

    private final Map<String, GgufValue> values;

    GgufMetadata(LinkedHashMap<String, GgufValue> values) {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
    }

    /** Keys in file order. */
    public Set<String> keys() {
        return values.keySet();
    }

    public int size() {
        return values.size();
    }

    public boolean has(String key) {
        return values.containsKey(key);
    }

    public GgufValueType type(String key) {
        return entry(key).type();
    }

    /** The element type of the array stored at {@code key}. */
    public GgufValueType arrayElementType(String key) {
        return array(key).elementType();
    }

    /** The value as stored: see {@link GgufValue} for the Java types; arrays are {@link GgufArray}. */
    public Object getRaw(String key) {
        return entry(key).value();
    }

    public String getString(String key) {
        return (String) typed(key, GgufValueType.STRING).value();
    }

    public String getString(String key, String def) {
        return has(key) ? getString(key) : def;
    }

    /** Any integer type; UINT64 values above {@code Long.MAX_VALUE} are refused. */
    public long getLong(String key) {
        return entry(key).asLong(key);
    }

    public long getLong(String key, long def) {
        return has(key) ? getLong(key) : def;
    }

    /** Any integer type whose value fits an int. */
    public int getInt(String key) {
        long v = getLong(key);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("key " + key + " is " + type(key) + " " + v + ", out of range for an int");
        }
        return (int) v;
    }

    public int getInt(String key, int def) {
        return has(key) ? getInt(key) : def;
    }

    /** FLOAT32, FLOAT64 (narrowed) or any integer type. */
    public float getFloat(String key) {
        GgufValue v = entry(key);
        return switch (v.type()) {
            case FLOAT32 -> (Float) v.value();
            case FLOAT64 -> (float) (double) (Double) v.value();
            default -> {
                if (!v.type().isInteger()) {
                    throw wrongType(key, v.type(), "FLOAT32");
                }
                yield (float) v.asLong(key);
            }
        };
    }

    public float getFloat(String key, float def) {
        return has(key) ? getFloat(key) : def;
    }

    /** FLOAT64, FLOAT32 (widened) or any integer type. */
    public double getDouble(String key) {
        GgufValue v = entry(key);
        return v.type() == GgufValueType.FLOAT64 ? (Double) v.value() : getFloat(key);
    }

    public boolean getBool(String key) {
        return (Boolean) typed(key, GgufValueType.BOOL).value();
    }

    public boolean getBool(String key, boolean def) {
        return has(key) ? getBool(key) : def;
    }

    /** The array stored at {@code key}, whatever its element type. */
    public GgufArray getArray(String key) {
        return array(key);
    }

    @SuppressWarnings("unchecked")
    public List<String> getStringArray(String key) {
        GgufArray a = array(key);
        if (a.elementType() != GgufValueType.STRING) {
            throw wrongType(key, "array of " + a.elementType(), "array of STRING");
        }
        return (List<String>) a.values();
    }

    /** FLOAT32 arrays (FLOAT64 and integer arrays are converted). A fresh copy. */
    public float[] getFloatArray(String key) {
        GgufArray a = array(key);
        return switch (a.elementType()) {
            case FLOAT32 -> ((float[]) a.values()).clone();
            case FLOAT64 -> {
                double[] d = (double[]) a.values();
                float[] f = new float[d.length];
                for (int i = 0; i < d.length; i++) {
                    f[i] = (float) d[i];
                }
                yield f;
            }
            default -> {
                if (!a.elementType().isInteger()) {
                    throw wrongType(key, "array of " + a.elementType(), "array of FLOAT32");
                }
                float[] f = new float[a.size()];
                for (int i = 0; i < f.length; i++) {
                    f[i] = a.longAt(i);
                }
                yield f;
            }
        };
    }

    /** Integer arrays of any width whose values fit an int (BOOL arrays give 0/1). A fresh copy. */
    public int[] getIntArray(String key) {
        GgufArray a = array(key);
        if (a.elementType() == GgufValueType.INT32) {
            return ((int[]) a.values()).clone();
        }
        if (!a.elementType().isInteger() && a.elementType() != GgufValueType.BOOL) {
            throw wrongType(key, "array of " + a.elementType(), "array of INT32");
        }
        int[] r = new int[a.size()];
        for (int i = 0; i < r.length; i++) {
            long v = a.longAt(i);
            if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE || (a.elementType() == GgufValueType.UINT64 && v < 0)) {
                throw new IllegalArgumentException("key " + key + "[" + i + "] is " + a.elementType() + " "
                        + (a.elementType() == GgufValueType.UINT64 ? Long.toUnsignedString(v) : v) + ", out of range for an int");
            }
            r[i] = (int) v;
        }
        return r;
    }

    /** Integer arrays of any width as longs (UINT64 keeps its bit pattern). A fresh copy. */
    public long[] getLongArray(String key) {
        GgufArray a = array(key);
        if (!a.elementType().isInteger()) {
            throw wrongType(key, "array of " + a.elementType(), "array of INT64");
        }
        long[] r = new long[a.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = a.longAt(i);
        }
        return r;
    }

    /** Copies of the entries, for writers that start from an existing file. */
    List<Map.Entry<String, GgufValue>> entries() {
        return new ArrayList<>(values.entrySet());
    }

    private GgufArray array(String key) {
        return (GgufArray) typed(key, GgufValueType.ARRAY).value();
    }

    private GgufValue typed(String key, GgufValueType want) {
        GgufValue v = entry(key);
        if (v.type() != want) {
            throw wrongType(key, v.type(), want.name());
        }
        return v;
    }

    private GgufValue entry(String key) {
        GgufValue v = values.get(key);
        if (v == null) {
            throw new IllegalArgumentException("missing key " + key);
        }
        return v;
    }

    static IllegalArgumentException wrongType(String key, Object is, String askedFor) {
        return new IllegalArgumentException("key " + key + " is " + is + ", asked for " + askedFor);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof GgufMetadata m && m.values.equals(values) && new ArrayList<>(m.keys()).equals(new ArrayList<>(keys()));
    }

    @Override
    public int hashCode() {
        return values.hashCode();
    }

    @Override
    public String toString() {
        return "GgufMetadata[" + values.size() + " keys]";
    }
}
