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
    public record Delta(String role, String content) {
    }
}
