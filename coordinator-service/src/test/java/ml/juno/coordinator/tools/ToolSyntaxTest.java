package ml.juno.coordinator.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** The three call syntaxes read back, and text that only looks like a call staying text. */
class ToolSyntaxTest {

    static Supplier<String> ids() {
        AtomicInteger n = new AtomicInteger();
        return () -> "call_" + n.incrementAndGet();
    }

    static ToolOutput parse(ToolSyntax s, String text) {
        return s.parse(text, ids());
    }

    @Test
    void hermes_oneCall_contentNullAndArgumentsCompactJson() {
        ToolOutput out = parse(ToolSyntax.HERMES, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>");
        assertNull(out.content());
        assertEquals(List.of(new ToolCall("call_1", "get_weather", "{\"city\":\"Paris\",\"days\":2}")), out.calls());
    }

    @Test
    void hermes_textAroundTwoCalls_keepsTheTextAndBothCallsInOrder() {
        ToolOutput out = parse(ToolSyntax.HERMES, "Let me look.\n<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n"
                + "<tool_call>{\"name\":\"b\",\"arguments\":\"{\\\"x\\\":1}\"}</tool_call>\nDone.");
        assertEquals("Let me look.\n\n\nDone.", out.content());
        assertEquals(List.of(new ToolCall("call_1", "a", "{}"), new ToolCall("call_2", "b", "{\"x\":1}")), out.calls());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call>", // bad JSON
        "<tool_call>{\"arguments\": {}}</tool_call>",                                  // no name
        "<tool_call>{\"name\": \"f\", \"arguments\": [1, 2]}</tool_call>",             // arguments not an object
        "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}",                       // cut off by max_tokens
        "<tool_call>[1]</tool_call>",
        "I would use <tool_call> here"})
    void hermes_malformed_staysTextVerbatim(String text) {
        ToolOutput out = parse(ToolSyntax.HERMES, text);
        assertTrue(out.calls().isEmpty(), out.toString());
        assertEquals(text.strip(), out.content());
    }

    @Test
    void hermes_malformedBlockThenGoodBlock_keepsTheBadOneAsTextAndParsesTheGoodOne() {
        ToolOutput out = parse(ToolSyntax.HERMES, "<tool_call>{oops}</tool_call><tool_call>{\"name\":\"f\",\"arguments\":{\"q\":\"x\"}}</tool_call>");
        assertEquals("<tool_call>{oops}</tool_call>", out.content());
        assertEquals(List.of(new ToolCall("call_1", "f", "{\"q\":\"x\"}")), out.calls());
    }

    @Test
    void llama3_jsonWithParameters_isACall() {
        ToolOutput out = parse(ToolSyntax.LLAMA3_JSON, " {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}");
        assertNull(out.content());
        assertEquals(List.of(new ToolCall("call_1", "get_weather", "{\"city\":\"Oslo\"}")), out.calls());
    }

    @Test
    void llama3_pythonTagAndSeveralCalls_separatedBySemicolons() {
        ToolOutput out = parse(ToolSyntax.LLAMA3_JSON,
                "<|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"arguments\": {\"k\": [1, \"}\"]}}");
        assertNull(out.content());
        assertEquals(List.of(new ToolCall("call_1", "a", "{}"), new ToolCall("call_2", "b", "{\"k\":[1,\"}\"]}")), out.calls());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "The weather is {\"name\": \"x\", \"parameters\": {}}", // a call only counts as the whole answer
        "{\"name\": \"a\", \"parameters\": {}} and then some words",
        "{\"name\": \"a\", \"parameters\": {",
        "{\"nome\": \"a\"}",
        "Sunny, 21 degrees."})
    void llama3_notAWholeCall_isText(String text) {
        ToolOutput out = parse(ToolSyntax.LLAMA3_JSON, text);
        assertTrue(out.calls().isEmpty());
        assertEquals(text.strip(), out.content());
    }

    @Test
    void mistral_markerAndArray_twoCalls() {
        ToolOutput out = parse(ToolSyntax.MISTRAL,
                "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]");
        assertNull(out.content());
        assertEquals(List.of(new ToolCall("call_1", "a", "{\"x\":1}"), new ToolCall("call_2", "b", "{}")), out.calls());
    }

    @Test
    void mistral_invisibleControlMarker_arrayAtTheStartIsStillACall() {
        ToolOutput out = parse(ToolSyntax.MISTRAL, "[{\"name\": \"a\", \"arguments\": {\"x\": \"]\"}}]");
        assertEquals(List.of(new ToolCall("call_1", "a", "{\"x\":\"]\"}")), out.calls());
    }

    @Test
    void mistral_textBeforeTheMarker_isContent() {
        ToolOutput out = parse(ToolSyntax.MISTRAL, "Checking. [TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}]");
        assertEquals("Checking.", out.content());
        assertEquals(1, out.calls().size());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}",      // cut off
        "[TOOL_CALLS][]",
        "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": 3}]",
        "[1] is a footnote",
        "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}] trailing words"})
    void mistral_malformed_isText(String text) {
        ToolOutput out = parse(ToolSyntax.MISTRAL, text);
        assertTrue(out.calls().isEmpty());
        assertEquals(text.strip(), out.content());
    }

    @Test
    void firstCallOnly_keepsOne() {
        ToolOutput out = parse(ToolSyntax.HERMES, "<tool_call>{\"name\":\"a\"}</tool_call><tool_call>{\"name\":\"b\"}</tool_call>");
        assertEquals(2, out.calls().size());
        assertEquals(List.of(new ToolCall("call_1", "a", "{}")), out.firstCallOnly().calls());
    }

    @Test
    void freshIds_areOpenAiShaped() {
        ToolOutput out = ToolSyntax.HERMES.parse("<tool_call>{\"name\":\"a\"}</tool_call><tool_call>{\"name\":\"a\"}</tool_call>");
        assertTrue(out.calls().get(0).id().matches("call_[A-Za-z0-9]{24}"), out.calls().get(0).id());
        assertTrue(!out.calls().get(0).id().equals(out.calls().get(1).id()));
    }
}
