package ml.juno.coordinator.api.dto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import ml.juno.coordinator.sampling.FinishReason;
import ml.juno.coordinator.scheduler.Usage;
import org.junit.jupiter.api.Test;

class ChunkFormatTest {
    private static final Usage NO_USAGE = new Usage(0, 0, 0);

    static final ObjectMapper JSON = new ObjectMapper();
    static final String TRICKY = "a \"quoted\" \\ back\nslash\ttab\r\u0001\u001f é 😀 \u2028";

    /** As a client parses it (numbers by value, not by Java type). */
    static JsonNode tree(Object value) throws Exception {
        return JSON.readTree(JSON.writeValueAsString(value));
    }

    static JsonNode payload(String frame) throws Exception {
        assertTrue(frame.startsWith("data: ") && frame.endsWith("\n\n"), frame);
        return JSON.readTree(frame.substring(6, frame.length() - 2));
    }

    @Test
    void chatContentChunk_handWritten_equalsTheRecordsJsonShape() throws Exception {
        ChunkFormat f = new ChunkFormat(JSON, null, true, "chatcmpl-x\"y", 123, "m\\odel", "fp_1");
        JsonNode fast = payload(f.content(1, TRICKY));
        JsonNode viaJackson = tree(new ChatCompletionChunk("chatcmpl-x\"y", "chat.completion.chunk", 123, "m\\odel", "fp_1",
                List.of(new ChatCompletionChunk.Choice(1, new ChatCompletionChunk.Delta(null, TRICKY), null, null)), null));
        assertEquals(viaJackson, fast);
        assertEquals(TRICKY, fast.at("/choices/0/delta/content").asText());
    }

    @Test
    void textContentChunk_handWritten_equalsTheRecordsJsonShape() throws Exception {
        ChunkFormat f = new ChunkFormat(JSON, null, false, "cmpl-1", 7, "m", "fp");
        JsonNode fast = payload(f.content(0, TRICKY));
        JsonNode viaJackson = tree(new TextCompletion("cmpl-1", "text_completion", 7, "m", "fp",
                List.of(new TextCompletion.Choice(TRICKY, 0, null, null)), null));
        assertEquals(viaJackson, fast);
    }

    @Test
    void finishAndUsageChunks_followOpenAi() throws Exception {
        ChunkFormat f = new ChunkFormat(JSON, null, true, "chatcmpl-1", 7, "m", "fp");
        JsonNode finish = payload(f.finish(0, FinishReason.LENGTH));
        assertEquals("length", finish.at("/choices/0/finish_reason").asText());
        assertEquals(0, finish.at("/choices/0/delta").size(), "empty delta");
        assertTrue(finish.at("/choices/0/logprobs").isNull());
        JsonNode usage = payload(f.usage(new Usage(5, 3, 2)));
        assertEquals(0, usage.get("choices").size());
        assertEquals(8, usage.at("/usage/total_tokens").asInt());
        assertEquals(2, usage.at("/usage/prompt_tokens_details/cached_tokens").asInt());
        JsonNode role = payload(f.role(0));
        assertEquals("assistant", role.at("/choices/0/delta/role").asText());
        assertEquals("", role.at("/choices/0/delta/content").asText());
    }

    /** Collects what a stream would send. */
    static List<String> drain(SseStream s) {
        List<String> frames = new ArrayList<>();
        s.frames(() -> { }).subscribe().with(frames::add);
        return frames;
    }

    @Test
    void stream_rolesThenContentThenFinishesThenUsageThenDone() throws Exception {
        SseStream s = new SseStream(new ChunkFormat(JSON, null, true, "chatcmpl-1", 7, "m", "fp"), true, 2, true).open();
        s.onToken(0, 5, "Once", null);
        s.onToken(1, 6, "", null); // held back text: no empty chunk
        s.onText(1, " upon");
        s.onChoiceFinished(1, FinishReason.STOP, NO_USAGE, "");
        s.onChoiceFinished(0, FinishReason.LENGTH, NO_USAGE, "");
        s.onFinished(new Usage(4, 2, 0));
        List<String> frames = drain(s);
        assertEquals(8, frames.size(), String.join("", frames));
        assertEquals("assistant", payload(frames.get(0)).at("/choices/0/delta/role").asText());
        assertEquals(1, payload(frames.get(1)).at("/choices/0/index").asInt());
        assertEquals("Once", payload(frames.get(2)).at("/choices/0/delta/content").asText());
        assertEquals(" upon", payload(frames.get(3)).at("/choices/0/delta/content").asText());
        assertEquals("stop", payload(frames.get(4)).at("/choices/0/finish_reason").asText());
        assertEquals("length", payload(frames.get(5)).at("/choices/0/finish_reason").asText());
        assertEquals(6, payload(frames.get(6)).at("/usage/total_tokens").asInt());
        assertEquals(ChunkFormat.DONE, frames.get(7));
        assertEquals("data: [DONE]\n\n", ChunkFormat.DONE);
    }

    @Test
    void errorAfterStreamingStarted_endsWithAnErrorEventThenDone() throws Exception {
        SseStream s = new SseStream(new ChunkFormat(JSON, null, false, "cmpl-1", 7, "m", "fp"), false, 1, true).open();
        s.onToken(0, 5, "Once", null);
        s.onChoiceFinished(0, FinishReason.ERROR, NO_USAGE, "node 1 gone");
        s.onFinished(new Usage(4, 1, 0));
        List<String> frames = drain(s);
        assertEquals(3, frames.size(), String.join("", frames));
        JsonNode error = payload(frames.get(1));
        assertTrue(error.at("/error/message").asText().contains("node 1 gone"), error.toString());
        assertEquals("server_error", error.at("/error/type").asText());
        assertEquals(ChunkFormat.DONE, frames.get(2));
    }
}
