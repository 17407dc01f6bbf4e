package ml.juno.engine.gguf;

import java.util.List;
import java.util.Locale;

/**
 * Human-readable text and JSON descriptions of a GGUF file: header, metadata (long arrays and strings summarised)
 * and the tensor table. The JSON is written by hand: the engine has no JSON library at runtime.
 */
public final class GgufInfo {

    /** Array elements shown in text before "…". */
    static final int TEXT_ARRAY_PREVIEW = 5;
    /** Characters of a string value shown in text before "…". */
    static final int TEXT_STRING_PREVIEW = 120;
    /** Array elements written to JSON by {@link #json(GgufFile)}. */
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
            element(sb, a, i, true);
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

    /** Element i of an array, as text (strings quoted and shortened) or JSON. */
    private static void element(StringBuilder sb, GgufArray a, int i, boolean text) {
        switch (a.values()) {
            case float[] x -> sb.append(text ? Float.toString(x[i]) : jsonNumber(x[i]));
            case double[] x -> sb.append(text ? Double.toString(x[i]) : jsonNumber(x[i]));
            case boolean[] x -> sb.append(x[i]);
            case List<?> list -> {
                Object o = list.get(i);
                if (o instanceof String s) {
                    if (text) {
                        quoted(sb, s, 40);
                    } else {
                        jsonString(sb, s);
                    }
                } else if (text) {
                    arrayText(sb, (GgufArray) o);
                } else {
                    jsonArray(sb, (GgufArray) o, Integer.MAX_VALUE);
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

    // ---------------------------------------------------------------- JSON

    /** JSON with arrays cut to their first {@link #JSON_ARRAY_PREVIEW} elements (the full count is always given). */
    public static String json(GgufFile f) {
        return json(f, JSON_ARRAY_PREVIEW);
    }

    /**
     * JSON object: {@code path, file_size, version, alignment, data_offset, metadata: {key: {type, value} or
     * {type: "ARRAY", element_type, count, values}}, tensors: [{name, type, shape, offset, bytes}]}. Arrays list at
     * most {@code maxArrayElements} values; NaN and infinities are written as the strings "NaN", "Infinity",
     * "-Infinity"; UINT64 values as unsigned numbers.
     */
    public static String json(GgufFile f, int maxArrayElements) {
        StringBuilder sb = new StringBuilder(4096);
        sb.append("{\"path\":");
        if (f.path() == null) {
            sb.append("null");
        } else {
            jsonString(sb, f.path().toString());
        }
        sb.append(",\"file_size\":").append(f.fileSize())
                .append(",\"version\":").append(f.version())
                .append(",\"alignment\":").append(f.alignment())
                .append(",\"data_offset\":").append(f.dataOffset())
                .append(",\"metadata\":{");
        GgufMetadata md = f.metadata();
        boolean first = true;
        for (String key : md.keys()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            jsonString(sb, key);
            GgufValueType type = md.type(key);
            sb.append(":{\"type\":\"").append(type).append('"');
            if (type == GgufValueType.ARRAY) {
                sb.append(',');
                jsonArrayFields(sb, (GgufArray) md.getRaw(key), maxArrayElements);
            } else {
                sb.append(",\"value\":");
                Object v = md.getRaw(key);
                switch (type) {
                    case STRING -> jsonString(sb, (String) v);
                    case FLOAT32 -> sb.append(jsonNumber((Float) v));
                    case FLOAT64 -> sb.append(jsonNumber((Double) v));
                    default -> sb.append(scalar(type, v));
                }
            }
            sb.append('}');
        }
        sb.append("},\"tensors\":[");
        first = true;
        for (GgufTensorInfo t : f.tensors()) {
            if (!first) {
                sb.append(',');
            }
            first = false;
            sb.append("{\"name\":");
            jsonString(sb, t.name());
            sb.append(",\"type\":\"").append(t.type()).append("\",\"shape\":").append(shape(t.shape()).replace(" ", ""))
                    .append(",\"offset\":").append(t.offset()).append(",\"bytes\":").append(t.byteSize()).append('}');
        }
        return sb.append("]}").toString();
    }

    private static void jsonArrayFields(StringBuilder sb, GgufArray a, int max) {
        sb.append("\"element_type\":\"").append(a.elementType()).append("\",\"count\":").append(a.size()).append(",\"values\":[");
        int shown = Math.min(a.size(), max);
        for (int i = 0; i < shown; i++) {
            if (i > 0) {
                sb.append(',');
            }
            element(sb, a, i, false);
        }
        sb.append(']');
    }

    /** A nested array as a JSON object of the same shape as top-level arrays. */
    private static void jsonArray(StringBuilder sb, GgufArray a, int max) {
        sb.append('{');
        jsonArrayFields(sb, a, max);
        sb.append('}');
    }

    private static String jsonNumber(double v) {
        if (Double.isNaN(v)) {
            return "\"NaN\"";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
        }
        return Double.toString(v); // e.g. 1.0E-5: valid JSON, reads back as the same double
    }

    private static String jsonNumber(float v) {
        if (Float.isNaN(v) || Float.isInfinite(v)) {
            return jsonNumber((double) v);
        }
        return Float.toString(v); // the shortest decimal that reads back as the same float
    }

    static void jsonString(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20 || (Character.isSurrogate(c) && !validSurrogateAt(s, i))) {
                        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }

    private static boolean validSurrogateAt(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }
}
