package ml.juno.coordinator.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Streamed content plus the calls at the end equal the blocking answer, for every syntax and many ways of cutting
 * the text into pieces (token-sized and single characters); content before a call is not held back.
 */
class ToolCallStreamTest {

    static final List<String> HERMES = List.of(
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
            "  Sure thing.  \n<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n and <tool_call>{\"name\":\"b\"}</tool_call> ok ",
            "No call here, just <tool text < and <tool_cal",
            "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}",
            "<tool_call>{broken}</tool_call> then text",
            "\n\n  ",
            "");
    static final List<String> LLAMA = List.of(
            "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Oslo\"}}",
            "  <|python_tag|>{\"name\": \"a\", \"parameters\": {}}; {\"name\": \"b\", \"parameters\": {}}",
            "It is {sunny}.",
            "<|python", "{\"name\": \"a\", \"parameters\": {} and words");
    static final List<String> MISTRAL = List.of(
            "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": 1}}]",
            "[{\"name\": \"a\", \"arguments\": {}}]",
            "Let me check [TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}}]",
            "[1] a footnote [TOOL_CALLS",
            "plain text with [brackets]");

    @Test
    void everySyntax_streamedEqualsBlocking_underRandomSplits() {
        Random random = new Random(42);
        check(ToolSyntax.HERMES, HERMES, random);
        check(ToolSyntax.LLAMA3_JSON, LLAMA, random);
        check(ToolSyntax.MISTRAL, MISTRAL, random);
    }

    private static void check(ToolSyntax syntax, List<String> texts, Random random) {
        for (String text : texts) {
            ToolOutput blocking = syntax.parse(text, ToolSyntaxTest.ids());
            for (int round = 0; round < 50; round++) {
                ToolCallStream s = new ToolCallStream(syntax);
                StringBuilder streamed = new StringBuilder();
                for (String piece : split(text, random, round == 0)) {
                    streamed.append(s.feed(piece));
                }
                ToolCallStream.End end = s.finish();
                streamed.append(end.content());
                String expected = blocking.content() == null ? "" : blocking.content();
                assertEquals(expected, streamed.toString(), syntax + " " + text);
                assertEquals(names(blocking), names(end.output()), syntax + " " + text);
            }
        }
    }

    private static List<String> names(ToolOutput o) {
        return o.calls().stream().map(c -> c.name() + c.arguments()).toList();
    }

    private static List<String> split(String text, Random random, boolean chars) {
        List<String> out = new ArrayList<>();
        int at = 0;
        while (at < text.length()) {
            int to = Math.min(text.length(), at + (chars ? 1 : 1 + random.nextInt(6)));
            out.add(text.substring(at, to));
            if (random.nextInt(8) == 0) {
                out.add(""); // a token that showed no text yet
            }
            at = to;
        }
        return out;
    }

    @Test
    void contentBeforeACall_streamsAsItComes() {
        ToolCallStream s = new ToolCallStream(ToolSyntax.HERMES);
        assertEquals("", s.feed("  "));
        assertEquals("Hello", s.feed("Hello "));
        assertEquals(" world", s.feed("world<tool"));
        assertEquals("", s.feed("_call>{\"name\":\"f\"}</tool_call>"));
        ToolCallStream.End end = s.finish();
        assertEquals("", end.content());
        assertEquals("f", end.output().calls().get(0).name());
    }

    @Test
    void llamaTextAnswer_streamsAtOnce_jsonAnswerIsHeld() {
        ToolCallStream text = new ToolCallStream(ToolSyntax.LLAMA3_JSON);
        assertEquals("Sunny", text.feed("Sunny"));
        ToolCallStream call = new ToolCallStream(ToolSyntax.LLAMA3_JSON);
        assertEquals("", call.feed("{\"name\""));
        assertEquals("", call.feed(": \"f\", \"parameters\": {}}"));
        assertEquals(1, call.finish().output().calls().size());
    }
}
