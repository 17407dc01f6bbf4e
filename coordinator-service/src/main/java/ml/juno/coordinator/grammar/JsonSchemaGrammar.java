package ml.juno.coordinator.grammar;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * JSON schema → GBNF whose sentences are JSON documents valid against the schema.
 *
 * <p>Supported: {@code type} (one or a list: object, array, string, number, integer, boolean, null), {@code properties}
 * with {@code required}, {@code additionalProperties} ({@code false}; or a schema / {@code true} for an object without
 * {@code properties}, a map), {@code items} with {@code minItems}/{@code maxItems}, {@code minLength}/{@code maxLength},
 * {@code enum}, {@code const}, {@code anyOf}/{@code oneOf} (as alternatives), a one-element {@code allOf}, and
 * {@code $ref} to any {@code #/...} pointer in the document ({@code #/$defs/x}, {@code #/definitions/x}; recursion
 * allowed). Annotations ({@code title}, {@code description}, {@code default}, {@code examples}, ...) are ignored.
 * Everything else ({@code pattern}, {@code format}, {@code minimum}, {@code not}, {@code if}, {@code patternProperties},
 * {@code uniqueItems: true}, ...) is refused with a {@link GrammarException} that names it, never ignored.
 *
 * <p>What the grammar produces (a subset of the valid documents, documented in docs/architecture.md): properties in
 * the order {@code properties} declares them, required ones always, optional ones or not; no properties beyond the
 * declared ones (as with {@code strict: true}); {@code oneOf} as {@code anyOf}; integers of at most 16 digits,
 * fractions of at most 16, exponents of at most 3; at most one space, tab or newline between tokens (compact or
 * lightly spaced JSON: a small model would otherwise pad with whitespace until max_tokens). The start rule takes no leading or trailing whitespace, so a closed root object ends the
 * text.
 */
public final class JsonSchemaGrammar {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> ANNOTATIONS = Set.of("title", "description", "default", "examples", "$schema",
            "$id", "$comment", "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "strict", "name");
    private static final Set<String> OBJECT = Set.of("properties", "required", "additionalProperties");
    private static final Set<String> ARRAY = Set.of("items", "minItems", "maxItems", "uniqueItems");
    private static final Set<String> STRING = Set.of("minLength", "maxLength");
    private static final List<String> TYPES = List.of("object", "array", "string", "number", "integer", "boolean", "null");

    private final String p;     // rule-name prefix
    private final JsonNode root;
    private final StringBuilder rules = new StringBuilder();
    private final Map<String, String> refRules = new HashMap<>();
    private int counter;

    private JsonSchemaGrammar(String prefix, JsonNode root) {
        this.p = prefix;
        this.root = root;
    }

    /**
     * The GBNF of {@code schemaJson}, its start rule named {@code rootName} and every other rule prefixed with
     * {@code rootName-} (so that grammars of several schemas can be joined into one text).
     *
     * @throws GrammarException the schema is not JSON, not a schema, or uses something unsupported (named)
     */
    public static String toGbnf(String schemaJson, String rootName) {
        JsonNode schema;
        try {
            schema = JSON.readTree(schemaJson);
        } catch (JsonProcessingException e) {
            throw new GrammarException("the schema is not valid JSON: " + e.getOriginalMessage());
        }
        if (schema == null) {
            throw new GrammarException("the schema is empty");
        }
        return toGbnf(schema, rootName);
    }

    /** {@link #toGbnf(String, String)} of a parsed schema. */
    public static String toGbnf(JsonNode schema, String rootName) {
        checkName(rootName);
        if (!schema.isObject() && !schema.isBoolean()) {
            throw new GrammarException("a JSON schema must be an object or a boolean, got " + schema.getNodeType());
        }
        JsonSchemaGrammar c = new JsonSchemaGrammar(rootName, schema);
        String body = c.schema(schema, "#");
        c.rules.insert(0, rootName + " ::= " + body + "\n");
        c.primitives();
        return c.rules.toString();
    }

    /** GBNF of any JSON object, start rule {@code rootName}. */
    public static String anyObjectGbnf(String rootName) {
        checkName(rootName);
        JsonSchemaGrammar c = new JsonSchemaGrammar(rootName, null);
        c.rules.append(rootName).append(" ::= ").append(rootName).append("-object\n");
        c.primitives();
        return c.rules.toString();
    }

    private static void checkName(String rootName) {
        if (rootName == null || !rootName.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException("rule name must be letters, digits, '-' or '_': " + rootName);
        }
    }

    private void primitives() {
        String ws = p + "-ws";
        rules.append(ws).append(" ::= [ \\t\\n]?\n"); // one at most: a small model would pad without end
        rules.append(p).append("-value ::= ").append(p).append("-object | ").append(p).append("-array | ").append(p)
                .append("-string | ").append(p).append("-number | \"true\" | \"false\" | \"null\"\n");
        String member = p + "-string " + ws + " \":\" " + ws + " " + p + "-value " + ws;
        rules.append(p).append("-object ::= \"{\" ").append(ws).append(" (").append(member).append(" (\",\" ").append(ws)
                .append(" ").append(member).append(")*)? \"}\"\n");
        String item = p + "-value " + ws;
        rules.append(p).append("-array ::= \"[\" ").append(ws).append(" (").append(item).append(" (\",\" ").append(ws)
                .append(" ").append(item).append(")*)? \"]\"\n");
        rules.append(p).append("-string ::= \"\\\"\" ").append(p).append("-char* \"\\\"\"\n");
        rules.append(p).append("-char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})\n");
        rules.append(p).append("-integer ::= \"-\"? (\"0\" | [1-9] [0-9]{0,15})\n");
        rules.append(p).append("-number ::= ").append(p).append("-integer (\".\" [0-9]{1,16})? ([eE] [-+]? [0-9]{1,3})?\n");
    }

    // ---- schema nodes ----

    /** An expression for {@code s} (found at JSON pointer {@code at}, for messages). */
    private String schema(JsonNode s, String at) {
        if (s.isBoolean()) {
            if (!s.booleanValue()) {
                throw new GrammarException("the schema at " + at + " is false: no value is valid");
            }
            return p + "-value";
        }
        if (!s.isObject()) {
            throw new GrammarException("the schema at " + at + " must be an object or a boolean");
        }
        if (s.has("$ref")) {
            only(s, at, Set.of("$ref"));
            return ref(s.get("$ref"), at);
        }
        if (s.has("anyOf") || s.has("oneOf")) {
            String key = s.has("anyOf") ? "anyOf" : "oneOf";
            only(s, at, Set.of(key));
            return alternatives(s.get(key), at + "/" + key, key);
        }
        if (s.has("allOf")) {
            only(s, at, Set.of("allOf"));
            JsonNode all = s.get("allOf");
            if (!all.isArray() || all.size() != 1) {
                throw new GrammarException("allOf with more than one schema is not supported (at " + at + ")");
            }
            return schema(all.get(0), at + "/allOf/0");
        }
        if (s.has("const")) {
            only(s, at, Set.of("const", "type"));
            return literal(s.get("const"));
        }
        if (s.has("enum")) {
            only(s, at, Set.of("enum", "type"));
            JsonNode values = s.get("enum");
            if (!values.isArray() || values.isEmpty()) {
                throw new GrammarException("enum at " + at + " must be a non-empty array");
            }
            Set<String> types = types(s, at);
            List<String> alts = new ArrayList<>();
            for (JsonNode v : values) {
                if (types == null || types.contains(typeOf(v)) || (types.contains("number") && v.isNumber())) {
                    alts.add(literal(v));
                }
            }
            if (alts.isEmpty()) {
                throw new GrammarException("no value of the enum at " + at + " has the schema's type");
            }
            return rule(String.join(" | ", alts));
        }
        Set<String> types = types(s, at);
        if (types == null) { // no type: what the keywords imply, else any value
            if (s.has("properties") || s.has("additionalProperties") || s.has("required")) {
                types = Set.of("object");
            } else if (s.has("items") || s.has("minItems") || s.has("maxItems")) {
                types = Set.of("array");
            } else if (s.has("minLength") || s.has("maxLength")) {
                types = Set.of("string");
            }
        }
        Set<String> allowed = new LinkedHashSet<>(Set.of("type"));
        if (types == null || types.contains("object")) {
            allowed.addAll(OBJECT);
        }
        if (types == null || types.contains("array")) {
            allowed.addAll(ARRAY);
        }
        if (types == null || types.contains("string")) {
            allowed.addAll(STRING);
        }
        only(s, at, allowed);
        if (types == null) {
            return p + "-value";
        }
        List<String> alts = new ArrayList<>();
        for (String t : types) {
            alts.add(switch (t) {
                case "object" -> object(s, at);
                case "array" -> array(s, at);
                case "string" -> string(s, at);
                case "number" -> p + "-number";
                case "integer" -> p + "-integer";
                case "boolean" -> "(\"true\" | \"false\")";
                case "null" -> "\"null\"";
                default -> throw new IllegalStateException(t);
            });
        }
        return alts.size() == 1 ? alts.get(0) : rule(String.join(" | ", alts));
    }

    /** The declared types, in a fixed order; null when there is no {@code type}. */
    private static Set<String> types(JsonNode s, String at) {
        JsonNode t = s.get("type");
        if (t == null) {
            return null;
        }
        Set<String> named = new TreeSet<>();
        if (t.isTextual()) {
            named.add(t.textValue());
        } else if (t.isArray() && !t.isEmpty()) {
            for (JsonNode x : t) {
                if (!x.isTextual()) {
                    throw new GrammarException("type at " + at + " must be a string or an array of strings");
                }
                named.add(x.textValue());
            }
        } else {
            throw new GrammarException("type at " + at + " must be a string or an array of strings");
        }
        Set<String> out = new LinkedHashSet<>();
        for (String known : TYPES) {
            if (named.remove(known)) {
                out.add(known);
            }
        }
        if (!named.isEmpty()) {
            throw new GrammarException("unknown type " + named + " at " + at);
        }
        return out;
    }

    private static String typeOf(JsonNode v) {
        return v.isObject() ? "object" : v.isArray() ? "array" : v.isTextual() ? "string"
                : v.isIntegralNumber() ? "integer" : v.isNumber() ? "number" : v.isBoolean() ? "boolean" : "null";
    }

    /** Refuses the keywords of {@code s} that are neither in {@code allowed} nor annotations, naming them. */
    private static void only(JsonNode s, String at, Set<String> allowed) {
        List<String> bad = new ArrayList<>();
        for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!allowed.contains(k) && !ANNOTATIONS.contains(k)) {
                bad.add(k);
            }
        }
        if (s.has("uniqueItems") && allowed.contains("uniqueItems") && s.get("uniqueItems").asBoolean(false)) {
            bad.add("uniqueItems");
        }
        if (!bad.isEmpty()) {
            throw new GrammarException("unsupported JSON schema " + (bad.size() == 1 ? "keyword " : "keywords ")
                    + String.join(", ", bad) + " at " + at + (allowed.size() > 1 ? "" : " (not combinable with "
                    + allowed.iterator().next() + ")"));
        }
    }

    private String alternatives(JsonNode list, String at, String key) {
        if (!list.isArray() || list.isEmpty()) {
            throw new GrammarException(key + " at " + at + " must be a non-empty array");
        }
        List<String> alts = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            alts.add(schema(list.get(i), at + "/" + i));
        }
        return rule(String.join(" | ", alts));
    }

    private String ref(JsonNode ref, String at) {
        if (!ref.isTextual() || !ref.textValue().startsWith("#")) {
            throw new GrammarException("$ref at " + at + " must point into this schema (#/$defs/..., #/definitions/...)");
        }
        String pointer = ref.textValue();
        String known = refRules.get(pointer);
        if (known != null) {
            return known;
        }
        JsonNode target;
        try {
            target = pointer.equals("#") ? root : root.at(pointer.substring(1));
        } catch (IllegalArgumentException e) {
            throw new GrammarException("$ref " + pointer + " at " + at + " is not a JSON pointer");
        }
        if (target == null || target.isMissingNode()) {
            throw new GrammarException("$ref " + pointer + " at " + at + " points to nothing");
        }
        String name = p + "-ref" + (++counter);
        refRules.put(pointer, name); // before compiling the target: recursive schemas call the rule
        String body = schema(target, pointer);
        rules.append(name).append(" ::= ").append(body).append('\n');
        return name;
    }

    private String object(JsonNode s, String at) {
        String ws = p + "-ws";
        JsonNode props = s.get("properties");
        JsonNode additional = s.get("additionalProperties");
        if (props != null && !props.isObject()) {
            throw new GrammarException("properties at " + at + " must be an object");
        }
        Set<String> required = new LinkedHashSet<>();
        JsonNode req = s.get("required");
        if (req != null) {
            if (!req.isArray()) {
                throw new GrammarException("required at " + at + " must be an array of names");
            }
            for (JsonNode r : req) {
                if (!r.isTextual()) {
                    throw new GrammarException("required at " + at + " must be an array of names");
                }
                if (props == null || !props.has(r.textValue())) {
                    throw new GrammarException("required property '" + r.textValue() + "' at " + at
                            + " is not declared in properties");
                }
                required.add(r.textValue());
            }
        }
        if (props == null || props.isEmpty()) {
            if (additional != null && additional.isBoolean() && !additional.booleanValue()) {
                return "\"{\" " + ws + " \"}\"";
            }
            String value = additional == null || additional.isBoolean() ? p + "-value"
                    : schema(additional, at + "/additionalProperties");
            String member = p + "-string " + ws + " \":\" " + ws + " " + value + " " + ws;
            return rule("\"{\" " + ws + " (" + member + " (\",\" " + ws + " " + member + ")*)? \"}\"");
        }
        if (additional != null && !additional.isBoolean()) {
            schema(additional, at + "/additionalProperties"); // checked, though only declared properties are produced
        }
        List<String> names = new ArrayList<>();
        List<String> members = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
            var e = it.next();
            names.add(e.getKey());
            String value = schema(e.getValue(), at + "/properties/" + e.getKey());
            members.add(rule(literal(JSON.getNodeFactory().textNode(e.getKey())) + " " + ws + " \":\" " + ws + " "
                    + value + " " + ws));
        }
        int k = names.size();
        // tails[i]: what may follow once a property before i is written: ("," member)s of i.., required ones always
        String[] tails = new String[k + 1];
        tails[k] = "\"\"";
        for (int i = k - 1; i >= 0; i--) {
            String one = "\",\" " + ws + " " + members.get(i);
            String rest = tails[i + 1];
            String restRef = rest.equals("\"\"") ? "" : " " + rest;
            tails[i] = rule(required.contains(names.get(i)) ? one + restRef : "(" + one + ")?" + restRef);
        }
        int firstRequired = k;
        for (int i = 0; i < k; i++) {
            if (required.contains(names.get(i))) {
                firstRequired = i;
                break;
            }
        }
        List<String> heads = new ArrayList<>();
        for (int i = 0; i <= Math.min(firstRequired, k - 1); i++) {
            heads.add(members.get(i) + (tails[i + 1].equals("\"\"") ? "" : " " + tails[i + 1]));
        }
        String body = "(" + String.join(" | ", heads) + ")" + (firstRequired == k ? "?" : "");
        return rule("\"{\" " + ws + " " + body + " \"}\"");
    }

    private String array(JsonNode s, String at) {
        String ws = p + "-ws";
        JsonNode items = s.get("items");
        if (items != null && items.isArray()) {
            throw new GrammarException("items as an array (tuples) is not supported (at " + at + ")");
        }
        String item = (items == null ? p + "-value" : schema(items, at + "/items")) + " " + ws;
        int min = count(s, "minItems", at, 0);
        int max = count(s, "maxItems", at, -1);
        if (max != -1 && max < min) {
            throw new GrammarException("maxItems below minItems at " + at);
        }
        if (max == 0) {
            return "\"[\" " + ws + " \"]\"";
        }
        String more = "(\",\" " + ws + " " + item + ")" + repeat(Math.max(0, min - 1), max == -1 ? -1 : max - 1);
        String list = item + " " + more;
        return rule("\"[\" " + ws + " " + (min == 0 ? "(" + list + ")?" : list) + " \"]\"");
    }

    private String string(JsonNode s, String at) {
        int min = count(s, "minLength", at, 0);
        int max = count(s, "maxLength", at, -1);
        if (max != -1 && max < min) {
            throw new GrammarException("maxLength below minLength at " + at);
        }
        if (min == 0 && max == -1) {
            return p + "-string";
        }
        return rule("\"\\\"\" " + p + "-char" + repeat(min, max) + " \"\\\"\"");
    }

    private static String repeat(int min, int max) {
        if (min == 0 && max == -1) {
            return "*";
        }
        return max == -1 ? "{" + min + ",}" : min == max ? "{" + min + "}" : "{" + min + "," + max + "}";
    }

    private static int count(JsonNode s, String key, String at, int absent) {
        JsonNode v = s.get(key);
        if (v == null) {
            return absent;
        }
        if (!v.canConvertToInt() || !v.isIntegralNumber() || v.intValue() < 0 || v.intValue() > GbnfParser.MAX_REPEAT) {
            throw new GrammarException(key + " at " + at + " must be an integer in [0, " + GbnfParser.MAX_REPEAT + "]");
        }
        return v.intValue();
    }

    /** A new helper rule whose body is {@code body}; returns its name. */
    private String rule(String body) {
        String name = p + "-" + (++counter);
        rules.append(name).append(" ::= ").append(body).append('\n');
        return name;
    }

    /** The exact JSON text of {@code v} (compact) as a GBNF string literal. */
    private static String literal(JsonNode v) {
        String text;
        try {
            text = JSON.writeValueAsString(v);
        } catch (JsonProcessingException e) {
            throw new GrammarException("cannot write " + v);
        }
        StringBuilder b = new StringBuilder("\"");
        text.codePoints().forEach(cp -> {
            if (cp == '"' || cp == '\\') {
                b.append('\\').appendCodePoint(cp);
            } else if (cp < 0x20 || cp == 0x7F) {
                b.append(String.format("\\x%02X", cp));
            } else {
                b.appendCodePoint(cp);
            }
        });
        return b.append('"').toString();
    }
}
