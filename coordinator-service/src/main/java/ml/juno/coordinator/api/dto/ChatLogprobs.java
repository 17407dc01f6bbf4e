package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.List;

/** Chat log-probabilities: one entry per generated token, with its best alternatives. */
public record ChatLogprobs(List<Entry> content) {

    public record Entry(String token, float logprob, int[] bytes, @JsonProperty("top_logprobs") List<Top> topLogprobs) {
    }

    public record Top(String token, float logprob, int[] bytes) {
    }
}
