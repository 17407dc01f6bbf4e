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
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** {@code POST /v1/completions} (legacy text completions; {@code logprobs} is a count 0..5 here). */
public record CompletionRequest(
        @Schema(description = "The model to use: the served model's id or one of its LoRA adapters (GET /v1/models). Omitted: the served model.")
        @Size(min = 1, max = 256) String model, // omitted: the served model
        @Schema(implementation = PromptShape.class, description = "The prompt: a string, an array of token ids, an array of strings, or an array of token-id arrays (up to 64 prompts; choice p * n + i is choice i of prompt p).")
        @NotNull @JsonDeserialize(using = PromptField.class) List<PromptInput> prompt,
        @Schema(description = "Tokens to generate at most per choice; default 16 (or the server's --max-tokens).")
        @JsonProperty("max_tokens") @Min(1) Integer maxTokens,
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
        @Schema(description = "Return the log-probability of each token and this many alternatives (0..5) in the legacy shape (tokens, token_logprobs, top_logprobs, text_offset).")
        @Min(0) @Max(5) Integer logprobs,
        @Schema(description = "Start each choice with its prompt text; with logprobs, the prompt tokens are scored too (the first has a null logprob unless a BOS precedes it; the BOS itself is not listed).")
        Boolean echo,
        @Schema(description = "Generate best_of choices per prompt and return the n with the highest mean token log-probability (best first); at least n, not with stream. The usage counts all of them.")
        @JsonProperty("best_of") @Min(1) @Max(Limits.MAX_N) Integer bestOf,
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
        @Schema(description = "Juno extension (llama.cpp server): a GBNF grammar the completion must follow.")
        @Size(max = GrammarMapping.MAX_GRAMMAR_CHARS) String grammar) implements SamplingFields {

    public int tokenLimit() {
        return maxTokens != null ? maxTokens : Limits.DEFAULT_COMPLETION_TOKENS;
    }

    public int logprobCount() {
        return logprobs != null ? logprobs : -1;
    }

    public boolean echoes() {
        return Boolean.TRUE.equals(echo);
    }

    /** Choices generated per prompt: {@code best_of}, else {@code n}. */
    public int generatedPerPrompt() {
        return bestOf != null ? bestOf : n != null ? n : 1;
    }

    /** The schema of {@code prompt} in the OpenAPI document: OpenAI's four shapes. */
    @Schema(name = "Prompt", oneOf = {String.class, int[].class, String[].class, int[][].class},
            description = "A string, an array of token ids, an array of strings, or an array of token-id arrays.")
    interface PromptShape {
    }
}
