package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** One streamed chat event ({@code object: "chat.completion.chunk"}). */
public record ChatCompletionChunk(String id, String object, long created, String model,
                                  @JsonProperty("system_fingerprint") String systemFingerprint,
                                  List<Choice> choices, @JsonInclude(JsonInclude.Include.NON_NULL) UsageDto usage) {

    public record Choice(int index, Delta delta, @JsonInclude(JsonInclude.Include.ALWAYS) ChatLogprobs logprobs,
                         @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS) String finishReason) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Delta(String role, String content, @JsonProperty("tool_calls") List<ToolCallDelta> toolCalls) {
        public Delta(String role, String content) {
            this(role, content, null);
        }
    }

    /**
     * A piece of a streamed call, as OpenAI sends them: the first piece of call {@code index} has its id, type and
     * name (and empty arguments), the next ones only argument fragments.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record ToolCallDelta(int index, String id, String type, FunctionDelta function) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record FunctionDelta(String name, String arguments) {
    }
}
