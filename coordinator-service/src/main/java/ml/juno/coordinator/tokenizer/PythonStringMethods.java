package ml.juno.coordinator.tokenizer;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * Lets Jinjava call the Python {@code str} methods that Hugging Face chat templates use
 * ({@code startswith}, {@code endswith}, {@code strip('x')}, {@code split}, {@code lower}, {@code title},
 * …). Jinja2 templates run with Python semantics; Jinjava would otherwise look for Java methods of
 * those names. Anything else falls through to Jinjava's own resolver.
 */
final class PythonStringMethods extends ELResolver {

    @Override
    public Object invoke(ELContext context, Object base, Object method, Class<?>[] paramTypes, Object[] params) {
        if (!(base instanceof String s) || method == null) {
            return null;
        }
        Object[] p = params == null ? new Object[0] : params;
        Object result;
        switch (method.toString()) {
            case "startswith" -> result = anyMatch(s, p, true);
            case "endswith" -> result = anyMatch(s, p, false);
            case "strip" -> result = stripRight(stripLeft(s, chars(p)), chars(p));
            case "lstrip" -> result = stripLeft(s, chars(p));
            case "rstrip" -> result = stripRight(s, chars(p));
            case "lower" -> result = s.toLowerCase(Locale.ROOT);
            case "upper" -> result = s.toUpperCase(Locale.ROOT);
            case "title" -> result = title(s);
            case "capitalize" -> result = s.isEmpty() ? s
                    : s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1).toLowerCase(Locale.ROOT);
            case "split" -> result = split(s, p);
            case "find" -> result = p.length == 1 ? s.indexOf(String.valueOf(p[0])) : null;
            case "count" -> result = p.length == 1 ? count(s, String.valueOf(p[0])) : null;
            case "replace" -> result = p.length == 2 ? s.replace(String.valueOf(p[0]), String.valueOf(p[1])) : null;
            case "isdigit" -> result = !s.isEmpty() && s.chars().allMatch(Character::isDigit);
            case "isalpha" -> result = !s.isEmpty() && s.chars().allMatch(Character::isLetter);
            case "isspace" -> result = !s.isEmpty() && s.chars().allMatch(Character::isWhitespace);
            case "join" -> result = p.length == 1 && p[0] instanceof Iterable<?> it ? join(s, it) : null;
            default -> result = null;
        }
        if (result != null) {
            context.setPropertyResolved(true);
        }
        return result;
    }

    private static boolean anyMatch(String s, Object[] p, boolean prefix) {
        if (p.length == 0) {
            return false;
        }
        if (p[0] instanceof Iterable<?> options) { // startswith(('a', 'b'))
            for (Object o : options) {
                if (prefix ? s.startsWith(String.valueOf(o)) : s.endsWith(String.valueOf(o))) {
                    return true;
                }
            }
            return false;
        }
        String x = String.valueOf(p[0]);
        return prefix ? s.startsWith(x) : s.endsWith(x);
    }

    /** The characters to strip, or null for Python's default (whitespace). */
    private static String chars(Object[] p) {
        return p.length == 0 || p[0] == null ? null : String.valueOf(p[0]);
    }

    private static boolean strippable(char c, String chars) {
        return chars == null ? Character.isWhitespace(c) || Character.isSpaceChar(c) : chars.indexOf(c) >= 0;
    }

    private static String stripLeft(String s, String chars) {
        int i = 0;
        while (i < s.length() && strippable(s.charAt(i), chars)) {
            i++;
        }
        return s.substring(i);
    }

    private static String stripRight(String s, String chars) {
        int i = s.length();
        while (i > 0 && strippable(s.charAt(i - 1), chars)) {
            i--;
        }
        return s.substring(0, i);
    }

    private static String title(String s) {
        StringBuilder sb = new StringBuilder(s.length());
        boolean prevLetter = false;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            sb.append(prevLetter ? Character.toLowerCase(c) : Character.toUpperCase(c));
            prevLetter = Character.isLetter(c);
        }
        return sb.toString();
    }

    private static List<String> split(String s, Object[] p) {
        List<String> out = new ArrayList<>();
        int max = p.length > 1 && p[1] instanceof Number n ? n.intValue() : -1;
        if (p.length == 0 || p[0] == null) { // split on runs of whitespace, dropping empty pieces
            for (String part : s.strip().split("\\s+", max < 0 ? 0 : max + 1)) {
                if (!part.isEmpty()) {
                    out.add(part);
                }
            }
            return out;
        }
        String sep = String.valueOf(p[0]);
        if (sep.isEmpty()) {
            throw new IllegalArgumentException("empty separator");
        }
        int from = 0;
        while (max < 0 || out.size() < max) {
            int at = s.indexOf(sep, from);
            if (at < 0) {
                break;
            }
            out.add(s.substring(from, at));
            from = at + sep.length();
        }
        out.add(s.substring(from));
        return out;
    }

    private static int count(String s, String sub) {
        if (sub.isEmpty()) {
            return s.length() + 1;
        }
        int n = 0;
        for (int at = s.indexOf(sub); at >= 0; at = s.indexOf(sub, at + sub.length())) {
            n++;
        }
        return n;
    }

    private static String join(String sep, Iterable<?> items) {
        StringBuilder sb = new StringBuilder();
        boolean first = true;
        for (Object o : items) {
            if (!first) {
                sb.append(sep);
            }
            sb.append(o);
            first = false;
        }
        return sb.toString();
    }

    /** Python string indexing {@code s[0]}, {@code s[-1]}; other property access is left to Jinjava. */
    @Override
    public Object getValue(ELContext context, Object base, Object property) {
        if (base instanceof String s && property instanceof Number n) {
            int i = n.intValue() < 0 ? s.length() + n.intValue() : n.intValue();
            context.setPropertyResolved(true);
            return i >= 0 && i < s.length() ? String.valueOf(s.charAt(i)) : null;
        }
        return null;
    }

    @Override
    public Class<?> getType(ELContext context, Object base, Object property) {
        return null;
    }

    @Override
    public void setValue(ELContext context, Object base, Object property, Object value) {
    }

    @Override
    public boolean isReadOnly(ELContext context, Object base, Object property) {
        return true;
    }

    @Override
    public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
        return null;
    }

    @Override
    public Class<?> getCommonPropertyType(ELContext context, Object base) {
        return null;
    }
}
