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

/** {@code POST /v1/chat/completions} (OpenAI's fields and Juno's extensions, see {@link SamplingFields}). */
public record ChatCompletionRequest(
        @Size(min = 1, max = 256) String model, // omitted: the served model
        @NotEmpty @Size(max = 4096) List<@NotNull @Valid ChatMessageIn> messages,
        @JsonProperty("max_tokens") @Min(1) Integer maxTokens,
        @JsonProperty("max_completion_tokens") @Min(1) Integer maxCompletionTokens,
        @DecimalMin("0") @DecimalMax("2") Double temperature,
        @JsonProperty("top_p") @DecimalMin("0") @DecimalMax("1") Double topP,
        @JsonDeserialize(using = StopField.class) @Size(max = 4) List<@NotEmpty @Size(max = 1024) String> stop,
        Long seed,
        @Min(1) @Max(Limits.MAX_N) Integer n,
        @JsonProperty("presence_penalty") @DecimalMin("-2") @DecimalMax("2") Double presencePenalty,
        @JsonProperty("frequency_penalty") @DecimalMin("-2") @DecimalMax("2") Double frequencyPenalty,
        @JsonProperty("logit_bias") @Size(max = 1024) Map<String, @NotNull @DecimalMin("-100") @DecimalMax("100") Double> logitBias,
        Boolean logprobs,
        @JsonProperty("top_logprobs") @Min(0) @Max(20) Integer topLogprobs,
        Boolean stream,
        @JsonProperty("stream_options") @Valid StreamOptions streamOptions,
        @Size(max = 512) String user,
        @JsonProperty("top_k") @JsonAlias("x_juno_top_k") @Min(0) Integer topK,
        @JsonProperty("min_p") @DecimalMin("0") @DecimalMax("1") Double minP,
        @JsonProperty("repetition_penalty") @DecimalMin(value = "0", inclusive = false) @DecimalMax("10") Double repetitionPenalty,
        @JsonAlias("x_juno_priority") @Min(-1_000_000) @Max(1_000_000) Integer priority,
        @JsonProperty("response_format") @Valid ResponseFormat responseFormat,
        @Size(max = GrammarMapping.MAX_GRAMMAR_CHARS) String grammar,
        @Size(max = 128) List<@NotNull @Valid ChatTool> tools,
        @JsonProperty("tool_choice") @JsonDeserialize(using = ToolChoiceField.class) ml.juno.coordinator.tools.ToolChoice toolChoice,
        @JsonProperty("parallel_tool_calls") Boolean parallelToolCalls) implements SamplingFields {

    /** {@code max_completion_tokens} wins over the deprecated {@code max_tokens}; 0 = until the context is full. */
    public int tokenLimit() {
        return maxCompletionTokens != null ? maxCompletionTokens : maxTokens != null ? maxTokens : 0;
    }

    /** -1 when no log-probabilities were asked for, else the number of alternatives per token. */
    public int logprobCount() {
        return Boolean.TRUE.equals(logprobs) ? (topLogprobs != null ? topLogprobs : 0) : -1;
    }
}
