package ml.juno.coordinator.tokenizer;

import java.util.List;
import java.util.Map;

/**
 * What a chat template renders.
 *
 * @param messages            the conversation so far
 * @param addGenerationPrompt append the header that starts the assistant's reply
 * @param tools               tool (function) descriptions in OpenAI JSON shape; empty when none
 */
public record ChatRequest(List<ChatMessage> messages, boolean addGenerationPrompt, List<Map<String, Object>> tools) {
    public ChatRequest {
        messages = List.copyOf(messages);
        tools = tools == null ? List.of() : List.copyOf(tools);
    }

    public ChatRequest(List<ChatMessage> messages, boolean addGenerationPrompt) {
        this(messages, addGenerationPrompt, List.of());
    }
}
