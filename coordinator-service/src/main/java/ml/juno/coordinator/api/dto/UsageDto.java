package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import ml.juno.coordinator.scheduler.Usage;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** OpenAI's {@code usage} object. */
@Schema(description = "Token counts of the request.")
public record UsageDto(@Schema(description = "Prompt tokens; every prompt of a prompt array counted once.")
                       @JsonProperty("prompt_tokens") int promptTokens,
                       @Schema(description = "Generated tokens of all choices (best_of: of all generated choices).")
                       @JsonProperty("completion_tokens") int completionTokens,
                       @Schema(description = "prompt_tokens + completion_tokens.")
                       @JsonProperty("total_tokens") int totalTokens,
                       @Schema(description = "Details of the prompt tokens.")
                       @JsonProperty("prompt_tokens_details") PromptDetails promptTokensDetails) {

    public record PromptDetails(@Schema(description = "Prompt tokens served from the prefix cache (the best-cached choice).")
                                @JsonProperty("cached_tokens") int cachedTokens) {
    }

    public static UsageDto of(Usage u) {
        return new UsageDto(u.promptTokens(), u.completionTokens(), u.totalTokens(), new PromptDetails(u.cachedTokens()));
    }
}
