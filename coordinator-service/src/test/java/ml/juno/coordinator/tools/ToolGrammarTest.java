package ml.juno.coordinator.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import ml.juno.coordinator.grammar.Grammar;
import ml.juno.coordinator.grammar.GrammarException;
import org.junit.jupiter.api.Test;

/** A forced call's grammar accepts exactly calls of the allowed functions with schema-valid arguments, in each syntax. */
class ToolGrammarTest {

    static final ToolGrammar.Function WEATHER = new ToolGrammar.Function("get_weather",
            "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},\"unit\":{\"enum\":[\"c\",\"f\"]}},\"required\":[\"city\",\"unit\"]}");
    static final ToolGrammar.Function TIME = new ToolGrammar.Function("get_time",
            "{\"type\":\"object\",\"properties\":{\"zone\":{\"enum\":[\"UTC\",\"CET\"]}},\"required\":[\"zone\"]}");

    static final String W = "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}";
    static final String T = "{\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}";

    @Test
    void hermes_acceptsOneCallOfEitherFunction_andParsesBackToIt() {
        Grammar g = ToolGrammar.compile(ToolSyntax.HERMES, List.of(WEATHER, TIME), false);
        for (String call : List.of(W, T)) {
            String text = "<tool_call>\n" + call + "\n</tool_call>";
            assertTrue(g.accepts(text), text);
            ToolOutput out = ToolSyntax.HERMES.parse(text);
            assertEquals(1, out.calls().size());
        }
        assertEquals("{\"city\":\"Paris\",\"unit\":\"c\"}", ToolSyntax.HERMES.parse("<tool_call>\n" + W + "\n</tool_call>").calls().get(0).arguments());
        assertFalse(g.accepts("<tool_call>\n" + W + "\n</tool_call>\n<tool_call>\n" + T + "\n</tool_call>"), "one call only");
        assertTrue(g.acceptsPrefix("<tool_call>\n{\"name\": \"get_"));
        assertFalse(g.acceptsPrefix("Sure, <tool_call>"), "no text before the call");
    }

    @Test
    void hermes_rejectsUnknownNamesAndArgumentsOutsideTheSchema() {
        Grammar g = ToolGrammar.compile(ToolSyntax.HERMES, List.of(WEATHER, TIME), true);
        for (String bad : List.of(
                "{\"name\": \"get_moon\", \"arguments\": {}}",
                "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",                 // unit is required
                "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"k\"}}", // not in the enum
                "{\"name\": \"get_weather\", \"arguments\": {\"city\": 5, \"unit\": \"c\"}}",
                "{\"name\": \"get_time\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}")) { // another function's arguments
            assertFalse(g.accepts("<tool_call>\n" + bad + "\n</tool_call>"), bad);
        }
    }

    @Test
    void parallel_allowsSeveralBlocks_namedAllowsOnlyThatFunction() {
        Grammar parallel = ToolGrammar.compile(ToolSyntax.HERMES, List.of(WEATHER, TIME), true);
        assertTrue(parallel.accepts("<tool_call>\n" + W + "\n</tool_call>\n<tool_call>\n" + T + "\n</tool_call>"));
        Grammar named = ToolGrammar.compile(ToolSyntax.HERMES, List.of(TIME), true);
        assertFalse(named.accepts("<tool_call>\n" + W + "\n</tool_call>"));
        assertTrue(named.accepts("<tool_call>\n" + T + "\n</tool_call>"));
    }

    @Test
    void llama3AndMistral_writeTheirOwnSyntax_whichTheirParsersReadAsCalls() {
        Grammar llama = ToolGrammar.compile(ToolSyntax.LLAMA3_JSON, List.of(WEATHER, TIME), true);
        String l = "{\"name\": \"get_time\", \"parameters\": {\"zone\": \"CET\"}}; {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\", \"unit\": \"f\"}}";
        assertTrue(llama.accepts(l));
        assertFalse(llama.accepts(T), "Llama 3 calls carry parameters, not arguments");
        assertEquals(2, ToolSyntax.LLAMA3_JSON.parse(l).calls().size());
        Grammar mistral = ToolGrammar.compile(ToolSyntax.MISTRAL, List.of(WEATHER, TIME), true);
        String m = "[" + W + ", " + T + "]";
        assertTrue(mistral.accepts(m));
        assertEquals(2, ToolSyntax.MISTRAL.parse(m).calls().size());
    }

    @Test
    void argumentsWhitespace_isAtMostOneCharacter() { // the schema compiler's rule; a small model would pad otherwise
        Grammar g = ToolGrammar.compile(ToolSyntax.HERMES, List.of(WEATHER), false);
        assertTrue(g.accepts("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\", \"unit\": \"c\"}}\n</tool_call>"));
        assertFalse(g.accepts("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\"   :\"Paris\",\"unit\":\"c\"}}\n</tool_call>"),
                "no runs of blanks inside the arguments");
    }

    @Test
    void functionWithoutParameters_takesAnEmptyObject() {
        Grammar g = ToolGrammar.compile(ToolSyntax.HERMES, List.of(new ToolGrammar.Function("ping", "{\"type\":\"object\",\"properties\":{}}")), false);
        assertTrue(g.accepts("<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>"));
    }

    @Test
    void unsupportedSchemaFeature_isRefusedByName() {
        GrammarException e = assertThrows(GrammarException.class, () -> ToolGrammar.compile(ToolSyntax.HERMES,
                List.of(new ToolGrammar.Function("f", "{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\",\"pattern\":\"^a\"}}}")), false));
        assertTrue(e.getMessage().contains("pattern"), e.getMessage());
    }
}
