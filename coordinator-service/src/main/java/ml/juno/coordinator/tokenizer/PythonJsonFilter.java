package ml.juno.coordinator.tokenizer;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.Map;

/**
 * The {@code tojson} filter as Hugging Face templates see it: Python's
 * {@code json.dumps(x, ensure_ascii=False)}, i.e. {@code ", "} and {@code ": "} separators, non-ASCII
 * kept, and an optional {@code indent}. Tool-calling templates print tool schemas with it, so the
 * spacing must match what the model was trained on.
 */
final class PythonJsonFilter implements Filter {
    private static final JsonFactory PYTHON_JSON = JsonFactory.builder().disable(JsonWriteFeature.WRITE_HEX_UPPER_CASE).build();

    @Override
    public String getName() {
        return "tojson";
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
        return dumps(var, args.length > 0 && args[0] != null ? Integer.parseInt(args[0].trim()) : -1);
    }

    @Override
    public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
        Object indent = kwargs.getOrDefault("indent", args.length > 0 ? args[0] : null);
        return dumps(var, indent instanceof Number n ? n.intValue() : indent == null ? -1 : Integer.parseInt(indent.toString()));
    }

    static String dumps(Object v, int indent) {
        StringBuilder sb = new StringBuilder();
        write(sb, v, indent, 0);
        return sb.toString();
    }

    private static void write(StringBuilder sb, Object v, int indent, int depth) {
        if (v == null) {
            sb.append("null");
        } else if (v instanceof Boolean b) {
            sb.append(b ? "true" : "false");
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            sb.append(d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 1e16 ? String.format("%.1f", d) : String.valueOf(d));
        } else if (v instanceof Number n) {
            sb.append(n);
        } else if (v instanceof Map<?, ?> m) {
            if (m.isEmpty()) {
                sb.append("{}");
                return;
            }
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                sb.append(first ? "" : ",");
                newline(sb, indent, depth + 1, first);
                first = false;
                quote(sb, String.valueOf(e.getKey()));
                sb.append(": ");
                write(sb, e.getValue(), indent, depth + 1);
            }
            if (indent >= 0) {
                newline(sb, indent, depth, true);
            }
            sb.append('}');
        } else if (v instanceof Iterable<?> it) {
            if (!it.iterator().hasNext()) {
                sb.append("[]");
                return;
            }
            sb.append('[');
            boolean first = true;
            for (Object o : it) {
                sb.append(first ? "" : ",");
                newline(sb, indent, depth + 1, first);
                first = false;
                write(sb, o, indent, depth + 1);
            }
            if (indent >= 0) {
                newline(sb, indent, depth, true);
            }
            sb.append(']');
        } else if (v instanceof Object[] arr) {
            write(sb, java.util.Arrays.asList(arr), indent, depth);
        } else {
            quote(sb, v.toString());
        }
    }

    /** Python's item separator: ", " inline, or a newline plus indentation when indenting. */
    private static void newline(StringBuilder sb, int indent, int depth, boolean first) {
        if (indent >= 0) {
            sb.append('\n').append(" ".repeat(indent * depth));
        } else if (!first) {
            sb.append(' ');
        }
    }

    /** A JSON string as Python writes it: Jackson's escapes (the same set: quote, backslash, \b \f \n \r \t, other
     * controls as {@code \}{@code u00xx}) with Python's lower-case hex digits. */
    private static void quote(StringBuilder sb, String s) {
        StringWriter w = new StringWriter(s.length() + 2);
        try (JsonGenerator g = PYTHON_JSON.createGenerator(w)) {
            g.writeString(s);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not fail
        }
        sb.append(w.getBuffer());
    }
}
