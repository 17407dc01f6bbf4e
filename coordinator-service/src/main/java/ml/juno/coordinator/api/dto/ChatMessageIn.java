package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * One message of a chat request. {@code content} is a string or an array of text parts ({@link ContentField});
 * user, system and developer messages must have it ({@link RequestMapping#chatPrompt}); {@code null} content (an
 * assistant turn that only called tools) renders as empty.
 */
public record ChatMessageIn(
        @NotNull @Pattern(regexp = "system|developer|user|assistant|tool", message = "must be one of system, developer, user, assistant, tool")
        @Schema(description = "system, developer (treated as system), user, assistant or tool.")
        String role,
        @Schema(description = "A string or an array of {\"type\":\"text\",\"text\":...} parts (joined with newlines). Required for user, system and developer messages.")
        @JsonDeserialize(using = ContentField.class) String content,
        @Schema(description = "An optional participant name; not rendered by most chat templates.")
        @Size(max = 256) String name) {
}
