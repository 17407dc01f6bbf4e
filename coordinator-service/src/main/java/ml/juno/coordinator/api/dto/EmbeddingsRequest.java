package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.List;
import ml.juno.coordinator.service.PromptInput;

/**
 * {@code POST /v1/embeddings}: {@code input} a string, an array of strings, an array of token ids or an array of such
 * arrays; {@code encoding_format} {@code float} (the default) or {@code base64} (little-endian float32, as OpenAI);
 * {@code dimensions} only the model's own size; {@code user} accepted and unused.
 */
public record EmbeddingsRequest(
        @Size(min = 1, max = 256) String model, // omitted: the served model
        @NotNull @JsonDeserialize(using = EmbeddingInputField.class) List<PromptInput> input,
        @JsonProperty("encoding_format") @Pattern(regexp = "float|base64", message = "must be 'float' or 'base64'") String encodingFormat,
        @Min(1) Integer dimensions,
        @Size(max = 512) String user) {

    public boolean base64() {
        return "base64".equals(encodingFormat);
    }
}
