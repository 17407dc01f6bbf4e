package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonAlias;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import jakarta.validation.Valid;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.service.PromptInput;

/** {@code POST /v1/completions} (legacy text completions; {@code logprobs} is a count 0..5 here). */
public record CompletionRequest(
        @Size(min = 1, max = 256) String model, // omitted: the served model
        @NotNull @JsonDeserialize(using = PromptField.class) PromptInput prompt,
        @JsonProperty("max_tokens") @Min(1) Integer maxTokens,
        @DecimalMin("0") @DecimalMax("2") Double temperature,
        @JsonProperty("top_p") @DecimalMin("0") @DecimalMax("1") Double topP,
        @JsonDeserialize(using = StopField.class) @Size(max = 4) List<@NotEmpty @Size(max = 1024) String> stop,
        Long seed,
        @Min(1) @Max(Limits.MAX_N) Integer n,
        @JsonProperty("presence_penalty") @DecimalMin("-2") @DecimalMax("2") Double presencePenalty,
        @JsonProperty("frequency_penalty") @DecimalMin("-2") @DecimalMax("2") Double frequencyPenalty,
        @JsonProperty("logit_bias") @Size(max = 1024) Map<String, @NotNull @DecimalMin("-100") @DecimalMax("100") Double> logitBias,
        @Min(0) @Max(5) Integer logprobs,
        Boolean echo,
        Boolean stream,
        @JsonProperty("stream_options") @Valid StreamOptions streamOptions,
        @Size(max = 512) String user,
        @JsonProperty("top_k") @JsonAlias("x_juno_top_k") @Min(0) Integer topK,
        @JsonProperty("min_p") @DecimalMin("0") @DecimalMax("1") Double minP,
        @JsonProperty("repetition_penalty") @DecimalMin(value = "0", inclusive = false) @DecimalMax("10") Double repetitionPenalty,
        @JsonAlias("x_juno_priority") @Min(-1_000_000) @Max(1_000_000) Integer priority,
        @Size(max = GrammarMapping.MAX_GRAMMAR_CHARS) String grammar) implements SamplingFields {

    public int tokenLimit() {
        return maxTokens != null ? maxTokens : Limits.DEFAULT_COMPLETION_TOKENS;
    }

    public int logprobCount() {
        return logprobs != null ? logprobs : -1;
    }
}
