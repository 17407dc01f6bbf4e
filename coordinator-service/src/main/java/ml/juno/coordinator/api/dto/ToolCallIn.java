package ml.juno.coordinator.api.dto;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** A call an earlier assistant turn made ({@code messages[].tool_calls[]}), as the client sends it back. */
public record ToolCallIn(
        @NotNull @Size(min = 1, max = 256) String id,
        @NotNull @Pattern(regexp = "function", message = "must be 'function'") String type,
        @NotNull @Valid Function function) {

    /** @param arguments the arguments as a JSON string, as Juno (and OpenAI) returned them */
    @Schema(name = "ToolCallFunction")
    public record Function(@NotNull @Size(min = 1, max = 64) String name, @NotNull String arguments) {
    }
}
