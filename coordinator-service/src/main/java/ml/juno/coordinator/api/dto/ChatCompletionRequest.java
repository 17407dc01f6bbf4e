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
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** {@code POST /v1/chat/completions} (OpenAI's fields and Juno's extensions, see {@link SamplingFields}). */
public record ChatCompletionRequest(
        @Schema(description = "The model to use: the served model's id or one of its LoRA adapters (GET /v1/models). Omitted: the served model.")
        @Size(min = 1, max = 256) String model, // omitted: the served model
        @Schema(description = "The conversation, rendered with the model's chat template. user, system and developer messages need content.")
        @NotEmpty @Size(max = 4096) List<@NotNull @Valid ChatMessageIn> messages,
        @Schema(description = "Deprecated name of max_completion_tokens.")
        @JsonProperty("max_tokens") @Min(1) Integer maxTokens,
        @Schema(description = "Tokens to generate at most per choice; omitted: until the context is full (or the server's --max-tokens).")
        @JsonProperty("max_completion_tokens") @Min(1) Integer maxCompletionTokens,
        @Schema(description = "Sampling temperature in [0, 2]; 0 is greedy. Default 1 (or the server's --temperature).")
        @DecimalMin("0") @DecimalMax("2") Double temperature,
        @Schema(description = "Nucleus sampling: keep the smallest set of tokens whose probability reaches top_p, in [0, 1]. 0 means only the most likely token. Default 1.")
        @JsonProperty("top_p") @DecimalMin("0") @DecimalMax("1") Double topP,
        @Schema(description = "Up to 4 strings (or one string) that end the choice; the returned text and logprobs leave the stop string out.")
        @JsonDeserialize(using = StopField.class) @Size(max = 4) List<@NotEmpty @Size(max = 1024) String> stop,
        @Schema(description = "Seed of the random draw; choice i uses seed + i, so equal requests give equal answers. Omitted: random.")
        Long seed,
        @Schema(description = "Choices to generate per prompt, 1..16; they share the prompt's prefix cache.")
        @Min(1) @Max(Limits.MAX_N) Integer n,
        @Schema(description = "Penalty in [-2, 2] for tokens that already appeared in the last 64 tokens.")
        @JsonProperty("presence_penalty") @DecimalMin("-2") @DecimalMax("2") Double presencePenalty,
        @Schema(description = "Penalty in [-2, 2] per earlier occurrence of a token in the last 64 tokens.")
        @JsonProperty("frequency_penalty") @DecimalMin("-2") @DecimalMax("2") Double frequencyPenalty,
        @Schema(description = "Map of token id (as a string) to a bias in [-100, 100] added to its logit before sampling.")
        @JsonProperty("logit_bias") @Size(max = 1024) Map<String, @NotNull @DecimalMin("-100") @DecimalMax("100") Double> logitBias,
        @Schema(description = "Return the log-probability of each generated token (logprobs.content).")
        Boolean logprobs,
        @Schema(description = "With logprobs: this many most likely alternatives per token, 0..20.")
        @JsonProperty("top_logprobs") @Min(0) @Max(20) Integer topLogprobs,
        @Schema(description = "Answer as server-sent events (chunks) ending with data: [DONE].")
        Boolean stream,
        @Schema(description = "Only with stream: {\"include_usage\": true} adds a last chunk with the usage and empty choices; every other chunk then has \"usage\": null.")
        @JsonProperty("stream_options") @Valid StreamOptions streamOptions,
        @Schema(description = "An end-user identifier; accepted and not used.")
        @Size(max = 512) String user,
        @Schema(description = "Juno extension (alias x_juno_top_k): keep only the k most likely tokens; 0 = off.")
        @JsonProperty("top_k") @JsonAlias("x_juno_top_k") @Min(0) Integer topK,
        @Schema(description = "Juno extension: drop tokens whose probability is below min_p times the best token's, in [0, 1].")
        @JsonProperty("min_p") @DecimalMin("0") @DecimalMax("1") Double minP,
        @Schema(description = "Juno extension (llama.cpp, vLLM): divide the logits of tokens seen in the last 64 tokens by this, in (0, 10]; 1 = off.")
        @JsonProperty("repetition_penalty") @DecimalMin(value = "0", inclusive = false) @DecimalMax("10") Double repetitionPenalty,
        @Schema(description = "Juno extension (alias x_juno_priority): lower runs first under load; default 0.")
        @JsonAlias("x_juno_priority") @Min(-1_000_000) @Max(1_000_000) Integer priority,
        @Schema(description = "{\"type\":\"text\"} (default), {\"type\":\"json_object\"} or {\"type\":\"json_schema\",\"json_schema\":{\"name\",\"schema\",\"strict\"}}: decoding is constrained so the answer parses (and validates against the schema).")
        @JsonProperty("response_format") @Valid ResponseFormat responseFormat,
        @Schema(description = "Juno extension (llama.cpp server): a GBNF grammar the answer must follow; not with response_format.")
        @Size(max = GrammarMapping.MAX_GRAMMAR_CHARS) String grammar,
        @Schema(description = "Functions the model may call (type function: name, description, parameters JSON schema), rendered through the model's chat template (docs/tools.md).")
        @Size(max = 128) List<@NotNull @Valid ChatTool> tools,
        @Schema(description = "auto (default with tools), none, required, or {\"type\":\"function\",\"function\":{\"name\":…}}; required and a named function constrain decoding to a valid call.")
        @JsonProperty("tool_choice") @JsonDeserialize(using = ToolChoiceField.class) ml.juno.coordinator.tools.ToolChoice toolChoice,
        @Schema(description = "false: at most one call per answer. Default true.")
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
