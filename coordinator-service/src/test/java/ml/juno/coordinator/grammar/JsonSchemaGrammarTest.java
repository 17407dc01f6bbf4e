package ml.juno.coordinator.grammar;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Schemas compiled to grammars against corpora of documents, each labelled valid or invalid by hand (the invalid
 * ones break one rule each). The grammar must accept exactly the valid ones, and every prefix of a valid one.
 */
class JsonSchemaGrammarTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    record Doc(String text, boolean valid) {
    }

    static Doc ok(String text) {
        return new Doc(text, true);
    }

    static Doc bad(String text) {
        return new Doc(text, false);
    }

    private static void assertCorpus(String schema, List<Doc> corpus) {
        Grammar g = Grammar.fromJsonSchema(schema);
        for (Doc d : corpus) {
            if (d.valid()) {
                assertDoesNotThrow(() -> JSON.readTree(d.text()), "the corpus's valid documents are JSON: " + d.text());
                for (int i = 0; i < d.text().length(); i++) {
                    assertTrue(g.acceptsPrefix(d.text().substring(0, i)), "prefix of a valid document: " + d.text().substring(0, i));
                }
            }
            assertEquals(d.valid(), g.accepts(d.text()), (d.valid() ? "should accept " : "should reject ") + d.text()
                    + "\n" + g.gbnf());
        }
    }

    static final String PERSON = """
            {"type": "object", "additionalProperties": false,
             "properties": {
               "name": {"type": "string", "minLength": 1, "maxLength": 20},
               "age": {"type": "integer"},
               "email": {"type": "string"},
               "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
               "role": {"enum": ["admin", "user", null]}
             },
             "required": ["name", "age"]}
            """;

    @Test
    void person_requiredInOrderOptionalMayBeLeftOut() {
        assertCorpus(PERSON, List.of(
                ok("{\"name\":\"Ann\",\"age\":31}"),
                ok("{ \"name\": \"Bo\", \"age\": -2, \"email\": \"bo@x.org\" }"),
                ok("{\"name\":\"C\",\"age\":0,\"tags\":[],\"role\":null}"),
                ok("{\"name\":\"D\",\"age\":7,\"tags\":[\"a\",\"b\",\"c\"],\"role\":\"admin\"}"),
                ok("{\n\"name\": \"E\\\"q\\\"\",\n\"age\": 12,\t\"role\": \"user\"\n}"),
                bad("{\"name\":\"Ann\"}"),                              // age missing
                bad("{\"age\":3}"),                                     // name missing
                bad("{\"name\":\"\",\"age\":3}"),                       // minLength 1
                bad("{\"name\":\"" + "x".repeat(21) + "\",\"age\":3}"), // maxLength 20
                bad("{\"name\":\"A\",\"age\":3.5}"),                    // not an integer
                bad("{\"name\":\"A\",\"age\":\"3\"}"),                  // a string
                bad("{\"name\":\"A\",\"age\":3,\"tags\":[\"a\",\"b\",\"c\",\"d\"]}"), // maxItems 3
                bad("{\"name\":\"A\",\"age\":3,\"tags\":[1]}"),         // items are strings
                bad("{\"name\":\"A\",\"age\":3,\"role\":\"root\"}"),    // not in the enum
                bad("{\"name\":\"A\",\"age\":3,\"nick\":\"x\"}"),       // additionalProperties false
                bad("{\"name\":\"A\",\"age\":3,}"),                     // trailing comma
                bad("{\"name\":\"A\",\"age\":3} "),                     // nothing may follow the root
                bad("[\"name\",\"A\"]"),
                bad("{\"name\":\"A\",  \"age\":3}")));                 // the documented limit: one whitespace between tokens
    }

    static final String NESTED = """
            {"type": "object", "additionalProperties": false, "required": ["id", "items", "total", "paid"],
             "properties": {
               "id": {"type": "integer"},
               "items": {"type": "array", "minItems": 1, "items": {
                  "type": "object", "additionalProperties": false, "required": ["sku", "qty"],
                  "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}, "note": {"type": ["string", "null"]}}}},
               "total": {"type": "number"},
               "paid": {"type": "boolean"},
               "meta": {"type": "object", "additionalProperties": {"type": "number"}}
             }}
            """;

    @Test
    void nested_objectsArraysNumbersBooleansNullableAndMaps() {
        assertCorpus(NESTED, List.of(
                ok("{\"id\":1,\"items\":[{\"sku\":\"a\",\"qty\":2}],\"total\":9.5,\"paid\":true}"),
                ok("{\"id\":2,\"items\":[{\"sku\":\"a\",\"qty\":1,\"note\":null},{\"sku\":\"b\",\"qty\":3,\"note\":\"x\"}],"
                        + "\"total\":-1.25e2,\"paid\":false,\"meta\":{\"w\":1,\"h\":2.5}}"),
                ok("{\"id\":3,\"items\":[{\"sku\":\"\",\"qty\":0}],\"total\":0,\"paid\":false,\"meta\":{}}"),
                bad("{\"id\":1,\"items\":[],\"total\":9.5,\"paid\":true}"),                       // minItems 1
                bad("{\"id\":1,\"items\":[{\"sku\":\"a\"}],\"total\":9.5,\"paid\":true}"),        // qty missing
                bad("{\"id\":1,\"items\":[{\"sku\":\"a\",\"qty\":2}],\"total\":9.5,\"paid\":\"yes\"}"),
                bad("{\"id\":1,\"items\":[{\"sku\":\"a\",\"qty\":2,\"note\":5}],\"total\":1,\"paid\":true}"),
                bad("{\"id\":1,\"items\":[{\"sku\":\"a\",\"qty\":2}],\"total\":1,\"paid\":true,\"meta\":{\"w\":\"1\"}}"),
                bad("{\"id\":1,\"items\":[{\"sku\":\"a\",\"qty\":2}],\"total\":01,\"paid\":true}"),
                bad("{\"id\":1,\"items\":[{\"sku\":\"a\",\"qty\":2}],\"total\":1.,\"paid\":true}")));
    }

    static final String REFS = """
            {"$defs": {
               "node": {"type": "object", "additionalProperties": false, "required": ["value"],
                        "properties": {"value": {"type": "integer"},
                                       "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}},
               "color": {"enum": ["red", "green", "blue"]}},
             "type": "object", "additionalProperties": false, "required": ["tree", "color"],
             "properties": {"tree": {"$ref": "#/$defs/node"}, "color": {"$ref": "#/$defs/color"},
                            "shape": {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "integer"}, {"const": [1, "two"]}]}}}
            """;

    @Test
    void refs_recursionAnyOfAndConst() {
        assertCorpus(REFS, List.of(
                ok("{\"tree\":{\"value\":1},\"color\":\"red\"}"),
                ok("{\"tree\":{\"value\":1,\"children\":[{\"value\":2,\"children\":[{\"value\":3}]},{\"value\":4}]},\"color\":\"blue\"}"),
                ok("{\"tree\":{\"value\":1},\"color\":\"green\",\"shape\":\"round\"}"),
                ok("{\"tree\":{\"value\":1},\"color\":\"green\",\"shape\":42}"),
                ok("{\"tree\":{\"value\":1},\"color\":\"green\",\"shape\":[1,\"two\"]}"),
                bad("{\"tree\":{\"value\":1,\"children\":[{}]},\"color\":\"red\"}"),
                bad("{\"tree\":{\"value\":1},\"color\":\"pink\"}"),
                bad("{\"tree\":{\"value\":1},\"color\":\"red\",\"shape\":\"square\"}"),
                bad("{\"tree\":{\"value\":1},\"color\":\"red\",\"shape\":[1,2]}"),
                bad("{\"tree\":{\"value\":1},\"color\":\"red\",\"shape\":true}")));
    }

    @Test
    void optionalOnly_allowsTheEmptyObjectAndAnySubsetInOrder() {
        String schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"},"
                + "\"c\":{\"type\":\"integer\"}},\"additionalProperties\":false}";
        assertCorpus(schema, List.of(ok("{}"), ok("{\"a\":1}"), ok("{\"b\":1}"), ok("{\"c\":1}"), ok("{\"a\":1,\"c\":3}"),
                ok("{\"b\":2,\"c\":3}"), ok("{\"a\":1,\"b\":2,\"c\":3}"), bad("{,\"a\":1}"), bad("{\"a\":1,,\"c\":3}"),
                bad("{\"a\":1,\"a\":1}")));
    }

    @Test
    void requiredInTheMiddle_optionalOnesAroundIt() {
        String schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"null\"},\"b\":{\"type\":\"null\"},"
                + "\"c\":{\"type\":\"null\"}},\"required\":[\"b\"],\"additionalProperties\":false}";
        assertCorpus(schema, List.of(ok("{\"b\":null}"), ok("{\"a\":null,\"b\":null}"), ok("{\"b\":null,\"c\":null}"),
                ok("{\"a\":null,\"b\":null,\"c\":null}"), bad("{}"), bad("{\"a\":null}"), bad("{\"a\":null,\"c\":null}")));
    }

    @Test
    void anyObject_isJsonModeAndStartsWithABrace() {
        Grammar g = Grammar.anyJsonObject();
        for (String s : List.of("{}", "{\"a\":[1,{\"b\":[]}],\"c\":\"\\u00e9\"}", "{ \"x\" : null }")) {
            assertTrue(g.accepts(s), s);
        }
        for (String s : List.of("[]", "1", "\"x\"", " {}", "{} ", "{\"a\"}")) {
            assertFalse(g.accepts(s), s);
        }
    }

    @Test
    void arrays_minAndMaxItems() {
        String schema = "{\"type\":\"array\",\"items\":{\"type\":\"boolean\"},\"minItems\":2,\"maxItems\":3}";
        assertCorpus(schema, List.of(ok("[true,false]"), ok("[true, false, true]"), bad("[true]"), bad("[]"),
                bad("[true,true,true,true]"), bad("[1,2]")));
    }

    @Test
    void unsupportedFeatures_areRefusedByName() {
        assertRefused("{\"type\":\"string\",\"pattern\":\"^a+$\"}", "pattern");
        assertRefused("{\"type\":\"string\",\"format\":\"email\"}", "format");
        assertRefused("{\"type\":\"integer\",\"minimum\":0}", "minimum");
        assertRefused("{\"not\":{\"type\":\"string\"}}", "not");
        assertRefused("{\"if\":{\"type\":\"string\"},\"then\":{}}", "if, then");
        assertRefused("{\"type\":\"object\",\"patternProperties\":{\"^x\":{}}}", "patternProperties");
        assertRefused("{\"type\":\"array\",\"uniqueItems\":true}", "uniqueItems");
        assertRefused("{\"type\":\"array\",\"items\":[{\"type\":\"string\"}]}", "tuples");
        assertRefused("{\"allOf\":[{\"type\":\"string\"},{\"maxLength\":3}]}", "allOf");
        assertRefused("{\"$ref\":\"https://example.com/s.json\"}", "$ref");
        assertRefused("{\"$ref\":\"#/$defs/missing\"}", "points to nothing");
        assertRefused("{\"type\":\"object\",\"properties\":{\"a\":{}},\"required\":[\"b\"]}", "'b'");
        assertRefused("{\"type\":\"thing\"}", "unknown type");
        assertRefused("{\"type\":\"object\",\"properties\":{\"deep\":{\"type\":\"string\",\"pattern\":\"x\"}}}",
                "#/properties/deep");
        assertRefused("not json", "not valid JSON");
        assertRefused("false", "no value is valid");
    }

    private static void assertRefused(String schema, String part) {
        GrammarException e = assertThrows(GrammarException.class, () -> Grammar.fromJsonSchema(schema), schema);
        assertTrue(e.getMessage().contains(part), "'" + e.getMessage() + "' should name '" + part + "'");
    }

    @Test
    void toGbnf_prefixesEveryRuleForComposition() {
        String a = JsonSchemaGrammar.toGbnf("{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"}},\"required\":[\"x\"]}", "args-a");
        String b = JsonSchemaGrammar.toGbnf("{\"type\":\"array\",\"items\":{\"type\":\"string\"}}", "args-b");
        Grammar both = Grammar.parseGbnf("root ::= \"A:\" args-a | \"B:\" args-b\n" + a + b);
        assertTrue(both.accepts("A:{\"x\":1}"));
        assertTrue(both.accepts("B:[\"s\"]"));
        assertFalse(both.accepts("A:[\"s\"]"));
    }

    @Test
    void emptySchema_isAnyValue() {
        Grammar g = Grammar.fromJsonSchema("{}");
        assertTrue(g.accepts("[1,\"a\",{\"b\":null}]"));
        assertTrue(g.accepts("3"));
        assertFalse(g.accepts("{"));
    }
}
