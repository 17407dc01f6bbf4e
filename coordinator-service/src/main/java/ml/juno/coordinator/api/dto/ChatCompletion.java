package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** A non-streaming chat completion ({@code object: "chat.completion"}). */
public record ChatCompletion(String id, String object, long created, String model,
                             @JsonProperty("system_fingerprint") String systemFingerprint,
                             List<Choice> choices, UsageDto usage) {

    public record Choice(int index, Message message, @JsonInclude(JsonInclude.Include.ALWAYS) ChatLogprobs logprobs,
                         @JsonProperty("finish_reason") String finishReason) {
    }

    /** {@code content} is null when the answer is only tool calls; {@code tool_calls} is left out when there are none. */
    public record Message(String role, @JsonInclude(JsonInclude.Include.ALWAYS) String content,
                          @JsonProperty("tool_calls") @JsonInclude(JsonInclude.Include.NON_EMPTY) List<ToolCallOut> toolCalls) {
        public Message(String role, String content) {
            this(role, content, List.of());
        }
    }

    /** A call in a whole answer: {@code {"id":"call_…","type":"function","function":{"name":…,"arguments":"{…}"}}}. */
    public record ToolCallOut(String id, String type, FunctionOut function) {
    }

    /** @param arguments the arguments as a JSON string */
    public record FunctionOut(String name, String arguments) {
    }
}
