package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** A non-streaming chat completion ({@code object: "chat.completion"}). */
@Schema(description = "A chat completion (stream false).")
public record ChatCompletion(@Schema(description = "Completion id, chatcmpl-….") String id,
                             @Schema(description = "Always chat.completion.") String object,
                             @Schema(description = "Unix time (seconds) the request was received.") long created,
                             @Schema(description = "The model (or adapter) that answered.") String model,
                             @Schema(description = "Identifies the model file and Juno build that answered.")
                             @JsonProperty("system_fingerprint") String systemFingerprint,
                             @Schema(description = "The n choices, by index.") List<Choice> choices,
                             @Schema(description = "Token counts.") UsageDto usage) {

    @Schema(name = "ChatCompletionChoice")
    public record Choice(@Schema(description = "0..n-1.") int index,
                         @Schema(description = "The assistant's message.") Message message,
                         @Schema(description = "Token log-probabilities when logprobs was true, else null.")
                         @JsonInclude(JsonInclude.Include.ALWAYS) ChatLogprobs logprobs,
                         @Schema(description = "stop (end of turn or a stop string) or length (max tokens or the context).")
                         @JsonProperty("finish_reason") String finishReason) {
    }

    /** {@code content} is null when the answer is only tool calls; {@code tool_calls} is left out when there are none. */
    public record Message(@Schema(description = "Always assistant.") String role,
                          @Schema(description = "The generated text, without the stop string that ended it; null when the answer is only tool calls.")
                          @JsonInclude(JsonInclude.Include.ALWAYS) String content,
                          @Schema(description = "The calls the model made (tools), each with an id; absent when none.")
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
