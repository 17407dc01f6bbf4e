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

    public record Message(String role, String content) {
    }
}
