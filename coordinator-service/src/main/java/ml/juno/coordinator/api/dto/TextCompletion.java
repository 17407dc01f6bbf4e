package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;

/** A text completion ({@code object: "text_completion"}), whole or as one streamed chunk. */
public record TextCompletion(String id, String object, long created, String model,
                             @JsonProperty("system_fingerprint") String systemFingerprint,
                             List<Choice> choices, @JsonInclude(JsonInclude.Include.NON_NULL) UsageDto usage) {

    public record Choice(String text, int index, @JsonInclude(JsonInclude.Include.ALWAYS) Logprobs logprobs,
                         @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS) String finishReason) {
    }

    /** The legacy log-probability shape: parallel lists. */
    public record Logprobs(List<String> tokens, @JsonProperty("token_logprobs") List<Float> tokenLogprobs,
                           @JsonProperty("top_logprobs") List<Map<String, Float>> topLogprobs,
                           @JsonProperty("text_offset") List<Integer> textOffset) {
    }
}
