package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * Chat log-probabilities: one entry per generated token that shows in the content, with its best alternatives (a token
 * that lies wholly inside the stop string that ended the choice is not listed; one the stop string cuts through is).
 */
@Schema(description = "Log-probabilities of the tokens of the content.")
public record ChatLogprobs(@Schema(description = "One entry per token that shows in the content, in order.") List<Entry> content) {

    public record Entry(@Schema(description = "The token as text.") String token,
                        @Schema(description = "Its log-probability (of the unmodified logits).") float logprob,
                        @Schema(description = "Its UTF-8 bytes (a character may span tokens).") int[] bytes,
                        @Schema(description = "The top_logprobs most likely tokens at this position.")
                        @JsonProperty("top_logprobs") List<Top> topLogprobs) {
    }

    public record Top(@Schema(description = "An alternative token as text.") String token,
                      @Schema(description = "Its log-probability.") float logprob,
                      @Schema(description = "Its UTF-8 bytes.") int[] bytes) {
    }
}
