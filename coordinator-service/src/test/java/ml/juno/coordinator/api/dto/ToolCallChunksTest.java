package ml.juno.coordinator.api.dto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.helpers.test.AssertSubscriber;
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.scheduler.Usage;
import ml.juno.coordinator.tokenizer.BuiltinChatTemplate;
import ml.juno.coordinator.tools.ToolChoice;
import ml.juno.coordinator.tools.ToolOutput;
import ml.juno.coordinator.tools.ToolPrompt;
import org.junit.jupiter.api.Test;

/**
 * The SSE frames of an answer with tool calls, reassembled as the openai SDK does (content concatenated, each
 * {@code tool_calls[index]} started by its id/type/name delta, arguments fragments appended), equal the blocking
 * answer's {@code content} and {@code tool_calls}, and the choice finishes with {@code tool_calls}.
 */
class ToolCallChunksTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final String ANSWER = "Checking both.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", "
            + "\"note\": \"a long string to split into several argument fragments, with ünïcödé 🌦\"}}\n</tool_call>\n"
            + "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>";

    static ToolMapping.Plan plan(boolean parallel) {
        return new ToolMapping.Plan(ToolPrompt.of(BuiltinChatTemplate.CHATML.bind("", "")),
                List.of(java.util.Map.of("type", "function")), ToolChoice.AUTO, parallel, null);
    }

    static List<JsonNode> frames(ToolMapping.Plan plan, List<String> pieces, FinishReason reason) throws Exception {
        SseStream s = new SseStream(new ChunkFormat(JSON, null, true, "chatcmpl-1", 7, "m", "fp"), true, 1, false).withTools(plan).open();
        AssertSubscriber<String> client = s.frames(() -> { }).subscribe().withSubscriber(AssertSubscriber.create(Long.MAX_VALUE));
        int id = 0;
        for (String p : pieces) {
            s.onToken(0, id++, p, null);
        }
        s.onChoiceFinished(0, reason, new Usage(1, id, 0), "");
        s.onFinished(new Usage(1, id, 0));
        client.assertCompleted();
        List<JsonNode> out = new ArrayList<>();
        for (String f : client.getItems()) {
            assertTrue(f.startsWith("data: ") && f.endsWith("\n\n"), f);
            String body = f.substring(6, f.length() - 2);
            if (!body.equals("[DONE]")) {
                out.add(JSON.readTree(body));
            }
        }
        return out;
    }

    static List<String> tokens(String text) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < text.length(); ) {
            int to = Math.min(text.length(), i + 3);
            if (Character.isHighSurrogate(text.charAt(to - 1))) {
                to++;
            }
            out.add(text.substring(i, to));
            i = to;
        }
        return out;
    }

    @Test
    void streamedToolCalls_reassembleToTheBlockingAnswer() throws Exception {
        ToolMapping.Plan plan = plan(true);
        List<JsonNode> chunks = frames(plan, tokens(ANSWER), FinishReason.STOP);
        ToolOutput blocking = plan.output(ANSWER);
        assertEquals(2, blocking.calls().size());

        StringBuilder content = new StringBuilder();
        List<String[]> calls = new ArrayList<>(); // id, name, arguments
        for (JsonNode c : chunks) {
            JsonNode delta = c.path("choices").path(0).path("delta");
            if (delta.path("content").isTextual()) {
                content.append(delta.get("content").asText());
            }
            for (JsonNode tc : delta.path("tool_calls")) {
                int index = tc.get("index").asInt();
                if (tc.has("id")) {
                    assertEquals(calls.size(), index, "a call starts with its id, in order");
                    assertEquals("function", tc.get("type").asText());
                    assertEquals("", tc.path("function").path("arguments").asText(), "first delta: empty arguments");
                    calls.add(new String[] {tc.get("id").asText(), tc.path("function").get("name").asText(), ""});
                } else {
                    assertTrue(!tc.path("function").has("name"), "later deltas carry only arguments");
                    calls.get(index)[2] += tc.path("function").get("arguments").asText();
                }
            }
        }
        assertEquals(blocking.content(), content.toString());
        assertEquals(blocking.calls().size(), calls.size());
        for (int i = 0; i < calls.size(); i++) {
            assertTrue(calls.get(i)[0].matches("call_[A-Za-z0-9]{24}"));
            assertEquals(blocking.calls().get(i).name(), calls.get(i)[1]);
            assertEquals(blocking.calls().get(i).arguments(), calls.get(i)[2]);
        }
        long fragments = chunks.stream().filter(c -> c.path("choices").path(0).path("delta").path("tool_calls").path(0).has("id") == false
                && c.path("choices").path(0).path("delta").has("tool_calls")).count();
        assertTrue(fragments > 2, "arguments come in several fragments: " + fragments);
        JsonNode last = chunks.get(chunks.size() - 1);
        assertEquals("tool_calls", last.path("choices").path(0).path("finish_reason").asText());
        assertEquals("assistant", chunks.get(0).path("choices").path(0).path("delta").path("role").asText());
    }

    @Test
    void parallelFalse_streamsOnlyTheFirstCall() throws Exception {
        List<JsonNode> chunks = frames(plan(false), tokens(ANSWER), FinishReason.STOP);
        assertTrue(chunks.stream().allMatch(c -> c.path("choices").path(0).path("delta").path("tool_calls").path(0).path("index").asInt(0) == 0));
        assertEquals(1, chunks.stream().filter(c -> c.path("choices").path(0).path("delta").path("tool_calls").path(0).has("id")).count());
    }

    @Test
    void answerWithoutCalls_streamsPlainContentAndTheEnginesReason() throws Exception {
        List<JsonNode> chunks = frames(plan(true), tokens("Once upon a time <tool there was"), FinishReason.LENGTH);
        StringBuilder content = new StringBuilder();
        for (JsonNode c : chunks) {
            assertNull(c.path("choices").path(0).path("delta").get("tool_calls"));
            content.append(c.path("choices").path(0).path("delta").path("content").asText(""));
        }
        assertEquals("Once upon a time <tool there was", content.toString());
        assertEquals("length", chunks.get(chunks.size() - 1).path("choices").path(0).path("finish_reason").asText());
    }
}
