package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import ml.juno.e2e.harness.AppLauncher;
import ml.juno.e2e.harness.LocalServer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** LangChain4j's OpenAI chat models (the Java ecosystem's own client) against {@code juno local}, unchanged. */
class LangChain4jIT {

    static AppLauncher server;

    @BeforeAll
    static void start() throws Exception {
        server = LocalServer.get();
    }

    @Test
    void langChain4jsOpenAiModels_chatAndStreamWithJuno() throws Exception {
        String base = server.url("/v1").toString();
        OpenAiChatModel chat = OpenAiChatModel.builder().baseUrl(base).apiKey("not-needed").modelName(LocalServer.MODEL_ID)
                .temperature(0.0).maxTokens(16).timeout(Duration.ofSeconds(60)).build();
        ChatResponse whole = chat.chat(dev.langchain4j.data.message.UserMessage.from("Once upon a time"));
        String text = whole.aiMessage().text();
        assertFalse(text.isBlank(), "an answer");
        assertTrue(whole.tokenUsage().outputTokenCount() > 0 && whole.tokenUsage().outputTokenCount() <= 16, whole.tokenUsage().toString());
        assertEquals(text, chat.chat("Once upon a time"), "greedy: the same answer again");

        OpenAiStreamingChatModel streaming = OpenAiStreamingChatModel.builder().baseUrl(base).apiKey("not-needed")
                .modelName(LocalServer.MODEL_ID).temperature(0.0).maxTokens(16).timeout(Duration.ofSeconds(60)).build();
        List<String> pieces = new ArrayList<>();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        streaming.chat("Once upon a time", new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partial) {
                pieces.add(partial);
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        });
        ChatResponse streamed = done.get(60, TimeUnit.SECONDS);
        assertTrue(pieces.size() > 1, "streamed in pieces: " + pieces);
        assertEquals(text, String.join("", pieces), "the streamed pieces make the same greedy answer");
        assertEquals(text, streamed.aiMessage().text());
    }
}
