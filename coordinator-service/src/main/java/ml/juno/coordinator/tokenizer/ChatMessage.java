package ml.juno.coordinator.tokenizer;

import java.util.Map;
import java.util.Objects;

/**
 * One turn of a conversation: {@code role} is "system", "user", "assistant" or "tool".
 *
 * @param fields further message fields a template may read, in OpenAI JSON shape (e.g.
 *     {@code tool_calls}, {@code tool_call_id}, {@code name}); empty for plain turns
 */
public record ChatMessage(String role, String content, Map<String, Object> fields) {
    public ChatMessage {
        Objects.requireNonNull(role, "role");
        content = content == null ? "" : content;
        fields = fields == null ? Map.of() : Map.copyOf(fields);
        if (fields.containsKey("role") || fields.containsKey("content")) {
            throw new IllegalArgumentException("role and content are not extra fields");
        }
    }

    public ChatMessage(String role, String content) {
        this(role, content, Map.of());
    }

    public static ChatMessage system(String content) {
        return new ChatMessage("system", content);
    }

    public static ChatMessage user(String content) {
        return new ChatMessage("user", content);
    }

    public static ChatMessage assistant(String content) {
        return new ChatMessage("assistant", content);
    }
}
