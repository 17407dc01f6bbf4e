package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** A text completion ({@code object: "text_completion"}), whole or as one streamed chunk. */
@Schema(description = "A text completion, or one streamed chunk of it (same object).")
public record TextCompletion(@Schema(description = "Completion id, cmpl-…; the same in every chunk of a stream.") String id,
                             @Schema(description = "Always text_completion.") String object,
                             @Schema(description = "Unix time (seconds) the request was received.") long created,
                             @Schema(description = "The model (or adapter) that answered.") String model,
                             @Schema(description = "Identifies the model file and Juno build that answered.")
                             @JsonProperty("system_fingerprint") String systemFingerprint,
                             @Schema(description = "The choices, by index; in a stream one per chunk, and none in the usage chunk.")
                             List<Choice> choices,
                             @Schema(description = "Token counts; in a stream only in the last chunk (stream_options.include_usage), null in the others.")
                             @JsonInclude(JsonInclude.Include.NON_NULL) UsageDto usage) {

    @Schema(name = "CompletionChoice")
    public record Choice(@Schema(description = "Generated text (after the prompt when echo is set); in a stream, the text of this chunk.") String text,
                         @Schema(description = "prompt * n + i for choice i of prompt p.") int index,
                         @Schema(description = "Token log-probabilities when logprobs was set, else null.")
                         @JsonInclude(JsonInclude.Include.ALWAYS) Logprobs logprobs,
                         @Schema(description = "stop (end of text or a stop string), length (max_tokens or the context) or null while streaming.")
                         @JsonProperty("finish_reason") @JsonInclude(JsonInclude.Include.ALWAYS) String finishReason) {
    }

    /** The legacy log-probability shape: parallel lists. */
    public record Logprobs(@Schema(description = "The tokens, as text pieces (echoed prompt tokens first).") List<String> tokens,
                           @Schema(description = "Log-probability of each token; null for a first prompt token with nothing before it.")
                           @JsonProperty("token_logprobs") List<Float> tokenLogprobs,
                           @Schema(description = "Per token, the logprobs most likely tokens and their log-probabilities (null where token_logprobs is).")
                           @JsonProperty("top_logprobs") List<Map<String, Float>> topLogprobs,
                           @Schema(description = "Character offset of each token in the choice's text.")
                           @JsonProperty("text_offset") List<Integer> textOffset) {
    }
}
