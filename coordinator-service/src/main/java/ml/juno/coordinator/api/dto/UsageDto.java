package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import ml.juno.coordinator.scheduler.Usage;

/** OpenAI's {@code usage} object. */
public record UsageDto(@JsonProperty("prompt_tokens") int promptTokens,
                       @JsonProperty("completion_tokens") int completionTokens,
                       @JsonProperty("total_tokens") int totalTokens,
                       @JsonProperty("prompt_tokens_details") PromptDetails promptTokensDetails) {

    public record PromptDetails(@JsonProperty("cached_tokens") int cachedTokens) {
    }

    public static UsageDto of(Usage u) {
        return new UsageDto(u.promptTokens(), u.completionTokens(), u.totalTokens(), new PromptDetails(u.cachedTokens()));
    }
}
