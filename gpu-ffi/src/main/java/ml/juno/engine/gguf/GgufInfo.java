package ml.juno.engine.gguf;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Human-readable text of a GGUF file, and its description as plain values for a JSON writer: header, metadata (long
 * arrays and strings summarised) and the tensor table. The engine has no JSON library; the CLI writes the description
 * with Jackson.
 */
public final class GgufInfo {

    /** Array elements shown in text before "…". */
    static final int TEXT_ARRAY_PREVIEW = 5;
    /** Characters of a string value shown in text before "…". */
    static final int TEXT_STRING_PREVIEW = 120;
    /** Array elements in {@link #describe(GgufFile)}. */
    public static final int JSON_ARRAY_PREVIEW = 16;

    private GgufInfo() {}

    // ---------------------------------------------------------------- text

    /** Multi-line text: header, one line per key, one line per tensor. */
    public static String text(GgufFile f) {
        StringBuilder sb = new StringBuilder();
        sb.append("file: ").append(f.path() == null ? "<memory>" : f.path()).append('\n');
        sb.append("size: ").append(f.fileSize()).append(" bytes, GGUF v").append(f.version()).append(", alignment ")
                .append(f.alignment()).append(", data offset ").append(f.dataOffset()).append('\n');
        GgufMetadata md = f.metadata();
        sb.append("metadata: ").append(md.size()).append(" keys\n");
        int keyWidth = md.keys().stream().mapToInt(String::length).max().orElse(0);
        for (String key : md.keys()) {
            GgufValueType type = md.type(key);
            String typeName = type == GgufValueType.ARRAY ? "[" + md.arrayElementType(key) + "]" : type.name();
            sb.append("  ").append(pad(key, keyWidth)).append("  ").append(pad(typeName, 9)).append("  ");
            appendText(sb, type, md.getRaw(key));
            sb.append('\n');
        }
        List<GgufTensorInfo> ts = f.tensors();
        long total = ts.stream().mapToLong(GgufTensorInfo::byteSize).sum();
        sb.append("tensors: ").append(ts.size()).append(", ").append(total).append(" bytes\n");
        if (!ts.isEmpty()) {
            int nameWidth = Math.max(4, ts.stream().mapToInt(t -> t.name().length()).max().orElse(0));
            sb.append("  ").append(pad("name", nameWidth)).append("  ").append(pad("type", 7)).append("  ")
                    .append(pad("shape", 22)).append("  ").append(pad("offset", 12)).append("  bytes\n");
            for (GgufTensorInfo t : ts) {
                sb.append("  ").append(pad(t.name(), nameWidth)).append("  ").append(pad(t.type().name(), 7)).append("  ")
                        .append(pad(shape(t.shape()), 22)).append("  ").append(pad(Long.toString(t.offset()), 12)).append("  ")
                        .append(t.byteSize()).append('\n');
            }
        }
        return sb.toString();
    }

    private static void appendText(StringBuilder sb, GgufValueType type, Object v) {
        switch (type) {
            case STRING -> quoted(sb, (String) v, TEXT_STRING_PREVIEW);
            case ARRAY -> arrayText(sb, (GgufArray) v);
            default -> sb.append(scalar(type, v));
        }
    }

    private static void arrayText(StringBuilder sb, GgufArray a) {
        int n = a.size();
        sb.append('[');
        if (n > TEXT_ARRAY_PREVIEW) {
            sb.append(n).append(' ').append(plural(a.elementType())).append(": ");
        }
        int shown = Math.min(n, TEXT_ARRAY_PREVIEW);
        for (int i = 0; i < shown; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            element(sb, a, i);
        }
        if (n > shown) {
            sb.append(", …");
        }
        sb.append(']');
    }

    private static String plural(GgufValueType t) {
        return switch (t) {
            case STRING -> "strings";
            case ARRAY -> "arrays";
            case BOOL -> "bools";
            case FLOAT32, FLOAT64 -> "floats";
            default -> "ints";
        };
    }

    /** Element i of an array as text (strings quoted and shortened). */
    private static void element(StringBuilder sb, GgufArray a, int i) {
        switch (a.values()) {
            case float[] x -> sb.append(x[i]);
            case double[] x -> sb.append(x[i]);
            case boolean[] x -> sb.append(x[i]);
            case List<?> list -> {
                Object o = list.get(i);
                if (o instanceof String s) {
                    quoted(sb, s, 40);
                } else {
                    arrayText(sb, (GgufArray) o);
                }
            }
            default -> sb.append(a.elementType() == GgufValueType.UINT64 ? Long.toUnsignedString(a.longAt(i)) : Long.toString(a.longAt(i)));
        }
    }

    private static String scalar(GgufValueType type, Object v) {
        return switch (type) {
            case UINT8 -> Integer.toString((Byte) v & 0xFF);
            case UINT16 -> Integer.toString((Short) v & 0xFFFF);
            case UINT32 -> Integer.toUnsignedString((Integer) v);
            case UINT64 -> Long.toUnsignedString((Long) v);
            default -> v.toString();
        };
    }

    private static void quoted(StringBuilder sb, String s, int max) {
        sb.append('"');
        int n = s.length();
        int end = Math.min(n, max);
        if (end < n && Character.isHighSurrogate(s.charAt(end - 1))) {
            end--;
        }
        for (int i = 0; i < end; i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                case '\r' -> sb.append("\\r");
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                default -> {
                    if (c < 0x20 || c == 0x7f) {
                        sb.append(String.format("\\x%02x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
        if (end < n) {
            sb.append("… (").append(n).append(" chars)");
        }
    }

    private static String shape(long[] shape) {
        StringBuilder sb = new StringBuilder("[");
        for (int i = 0; i < shape.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(shape[i]);
        }
        return sb.append(']').toString();
    }

    private static String pad(String s, int width) {
        return s.length() >= width ? s : s + " ".repeat(width - s.length());
    }

    // ---------------------------------------------------------------- JSON shape

    /** The description with arrays cut to their first {@link #JSON_ARRAY_PREVIEW} elements (the full count is always given). */
    public static Map<String, Object> describe(GgufFile f) {
        return describe(f, JSON_ARRAY_PREVIEW);
    }

    /**
     * The file as plain values for a JSON writer (the engine has none; the CLI's Jackson writes it): {@code path,
     * file_size, version, alignment, data_offset, metadata: {key: {type, value} or {type: "ARRAY", element_type, count,
     * values}}, tensors: [{name, type, shape, offset, bytes}]}. Arrays list at most {@code maxArrayElements} values; NaN
     * and infinities are the strings "NaN", "Infinity", "-Infinity"; UINT64 values unsigned ({@link BigInteger}).
     */
    public static Map<String, Object> describe(GgufFile f, int maxArrayElements) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("path", f.path() == null ? null : f.path().toString());
        root.put("file_size", f.fileSize());
        root.put("version", f.version());
        root.put("alignment", f.alignment());
        root.put("data_offset", f.dataOffset());
        Map<String, Object> metadata = new LinkedHashMap<>();
        GgufMetadata md = f.metadata();
        for (String key : md.keys()) {
            GgufValueType type = md.type(key);
            Object v = md.getRaw(key);
            Map<String, Object> entry = type == GgufValueType.ARRAY ? array((GgufArray) v, maxArrayElements)
                    : new LinkedHashMap<>(Map.of("type", type.name()));
            if (type != GgufValueType.ARRAY) {
                entry.put("value", scalarValue(type, v));
            }
            metadata.put(key, entry);
        }
        root.put("metadata", metadata);
        List<Object> tensors = new ArrayList<>();
        for (GgufTensorInfo t : f.tensors()) {
            Map<String, Object> e = new LinkedHashMap<>();
            e.put("name", t.name());
            e.put("type", t.type().name());
            List<Long> shape = new ArrayList<>();
            for (long d : t.shape()) {
                shape.add(d);
            }
            e.put("shape", shape);
            e.put("offset", t.offset());
            e.put("bytes", t.byteSize());
            tensors.add(e);
        }
        root.put("tensors", tensors);
        return root;
    }

    /** {@code {type: "ARRAY", element_type, count, values}}; nested arrays have the same shape. */
    private static Map<String, Object> array(GgufArray a, int max) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", GgufValueType.ARRAY.name());
        m.put("element_type", a.elementType().name());
        m.put("count", a.size());
        List<Object> values = new ArrayList<>();
        for (int i = 0, shown = Math.min(a.size(), max); i < shown; i++) {
            values.add(switch (a.values()) {
                case float[] x -> number(x[i]);
                case double[] x -> number(x[i]);
                case boolean[] x -> x[i];
                case List<?> list -> list.get(i) instanceof GgufArray inner ? array(inner, Integer.MAX_VALUE) : list.get(i);
                default -> a.elementType() == GgufValueType.UINT64 ? unsigned(a.longAt(i)) : (Object) a.longAt(i);
            });
        }
        m.put("values", values);
        return m;
    }

    private static Object scalarValue(GgufValueType type, Object v) {
        return switch (type) {
            case UINT8 -> (Byte) v & 0xFF;
            case UINT16 -> (Short) v & 0xFFFF;
            case UINT32 -> Integer.toUnsignedLong((Integer) v);
            case UINT64 -> unsigned((Long) v);
            case FLOAT32 -> number((Float) v);
            case FLOAT64 -> number((Double) v);
            default -> v;
        };
    }

    private static BigInteger unsigned(long v) {
        return new BigInteger(Long.toUnsignedString(v));
    }

    /** A float as itself, or the name of a value JSON has no number for. */
    private static Object number(float v) {
        return Float.isFinite(v) ? (Object) v : nonFinite(v);
    }

    private static Object number(double v) {
        return Double.isFinite(v) ? (Object) v : nonFinite(v);
    }

    private static String nonFinite(double v) {
        return Double.isNaN(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    }
}
