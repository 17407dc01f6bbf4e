package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import jakarta.validation.constraints.NotNull;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * {@code POST /v1/tokenize}: {@code add_special} adds BOS/EOS as the model asks (default false),
 * {@code parse_special} reads control-token text as those tokens (default true), as llama.cpp's server does.
 */
public record TokenizeRequest(String model, @NotNull String text,
                              @JsonProperty("add_special") Boolean addSpecial,
                              @JsonProperty("parse_special") Boolean parseSpecial) {

    public boolean addSpecialOrDefault() {
        return Boolean.TRUE.equals(addSpecial);
    }

    public boolean parseSpecialOrDefault() {
        return !Boolean.FALSE.equals(parseSpecial);
    }

    @Schema(name = "TokenizeResponse")
    public record Response(int[] tokens) {
    }
}
