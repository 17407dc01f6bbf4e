package ml.juno.coordinator.api.dto;

import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** {@code POST /v1/detokenize}: token ids back to text. */
public record DetokenizeRequest(String model, @NotNull @Size(max = 1_000_000) List<@NotNull Integer> tokens) {

    public int[] ids() {
        int[] ids = new int[tokens.size()];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = tokens.get(i);
        }
        return ids;
    }

    @Schema(name = "DetokenizeResponse")
    public record Response(String text) {
    }
}
