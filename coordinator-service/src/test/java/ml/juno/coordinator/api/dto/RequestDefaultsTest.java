package ml.juno.coordinator.api.dto;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.ObjectMapper;
import ml.juno.coordinator.service.GenerationOptions;
import org.junit.jupiter.api.Test;

/** The server's {@code --max-tokens/--temperature/--top-k/--top-p} fill exactly the fields a request leaves out. */
class RequestDefaultsTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final RequestDefaults SERVER = new RequestDefaults(48, 0.3, 40, 0.9);

    static ChatCompletionRequest chat(String fields) throws Exception {
        return JSON.readValue("{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]" + fields + "}", ChatCompletionRequest.class);
    }

    static CompletionRequest text(String fields) throws Exception {
        return JSON.readValue("{\"prompt\":\"Hi\"" + fields + "}", CompletionRequest.class);
    }

    @Test
    void unsetFields_takeTheServersDefaults() throws Exception {
        for (GenerationOptions o : new GenerationOptions[] {RequestMapping.chatOptions(chat(""), SERVER),
                RequestMapping.completionOptions(text(""), SERVER)}) {
            assertEquals(48, o.maxTokens());
            assertEquals(0.3f, o.sampling().temperature());
            assertEquals(40, o.sampling().truncation().topK());
            assertEquals(0.9f, o.sampling().truncation().topP());
        }
    }

    @Test
    void fieldsTheRequestSets_win() throws Exception {
        String fields = ",\"max_tokens\":5,\"temperature\":1.2,\"top_k\":3,\"top_p\":0.5";
        for (GenerationOptions o : new GenerationOptions[] {RequestMapping.chatOptions(chat(fields), SERVER),
                RequestMapping.completionOptions(text(fields), SERVER)}) {
            assertEquals(5, o.maxTokens());
            assertEquals(1.2f, o.sampling().temperature());
            assertEquals(3, o.sampling().truncation().topK());
            assertEquals(0.5f, o.sampling().truncation().topP());
        }
        assertEquals(7, RequestMapping.chatOptions(chat(",\"max_completion_tokens\":7"), SERVER).maxTokens());
    }

    @Test
    void withoutServerDefaults_openAisApply() throws Exception {
        GenerationOptions chat = RequestMapping.chatOptions(chat(""), RequestDefaults.OPENAI);
        assertEquals(0, chat.maxTokens(), "chat: until the context is full");
        assertEquals(1f, chat.sampling().temperature());
        assertEquals(Limits.DEFAULT_COMPLETION_TOKENS, RequestMapping.completionOptions(text(""), RequestDefaults.OPENAI).maxTokens());
    }

    @Test
    void outOfRangeDefaults_areRefused() {
        assertThrows(IllegalArgumentException.class, () -> new RequestDefaults(0, null, null, null));
        assertThrows(IllegalArgumentException.class, () -> new RequestDefaults(null, 2.5, null, null));
        assertThrows(IllegalArgumentException.class, () -> new RequestDefaults(null, null, -1, null));
        assertThrows(IllegalArgumentException.class, () -> new RequestDefaults(null, null, null, 1.5));
    }
}
