package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** One streamed chat event ({@code object: "chat.completion.chunk"}). */
@Schema(description = "One server-sent event of a streamed chat completion.")
public record ChatCompletionChunk(@Schema(description = "Completion id, the same in every chunk.") String id,
                                  @Schema(description = "Always chat.completion.chunk.") String object,
                                  @Schema(description = "Unix time (seconds) the request was received.") long created,
                                  @Schema(description = "The model (or adapter) that answered.") String model,
                                  @Schema(description = "Identifies the model file and Juno build that answered.")
                                  @JsonProperty("system_fingerprint") String systemFingerprint,
                                  @Schema(description = "One choice's delta; empty in the usage chunk.") List<Choice> choices,
                                  @Schema(description = "Only with stream_options.include_usage: the usage in the last chunk, null in all others.")
                                  @JsonInclude(JsonInclude.Include.NON_NULL) UsageDto usage) {

    @Schema(name = "ChatCompletionChunkChoice")
    public record Choice(@Schema(description = "The choice this chunk belongs to.") int index,
                         @Schema(description = "What this chunk adds to the message.") Delta delta,
                         @Schema(description = "The log-probabilities of this chunk's tokens when logprobs was true, else null.")
                         @JsonInclude(JsonInclude.Include.ALWAYS) ChatLogprobs logprobs,
                         @Schema(description = "null until the choice's last chunk: stop or length.")
                         @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS) String finishReason) {
    }

    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Delta(@Schema(description = "assistant, in each choice's first chunk only.") String role,
                        @Schema(description = "Text added by this chunk.") String content,
                        @Schema(description = "Pieces of tool calls: the first of call index i has its id, type and name, the next ones argument fragments.")
                        @JsonProperty("tool_calls") List<ToolCallDelta> toolCalls) {
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
