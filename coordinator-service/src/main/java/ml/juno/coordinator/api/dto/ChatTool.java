package ml.juno.coordinator.api.dto;

import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** One entry of a chat request's {@code tools}: {@code {"type":"function","function":{…}}}. */
public record ChatTool(
        @NotNull @Pattern(regexp = "function", message = "must be 'function'") String type,
        @NotNull @Valid Function function) {

    /**
     * @param parameters the arguments' JSON schema (an object schema); omitted: a function without arguments
     * @param strict     OpenAI's flag; Juno's forced calls are always constrained by {@code parameters}
     */
    @Schema(name = "FunctionDefinition")
    public record Function(
            @NotNull @Pattern(regexp = "[A-Za-z0-9_-]{1,64}", message = "must be 1 to 64 letters, digits, '_' or '-'") String name,
            @Size(max = 8192) String description,
            Map<String, Object> parameters,
            Boolean strict) {
    }
}
