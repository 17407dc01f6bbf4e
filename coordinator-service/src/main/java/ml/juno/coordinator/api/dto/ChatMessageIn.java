package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;

/**
 * One message of a chat request. {@code content} is a string or an array of text parts ({@link ContentField});
 * {@code null} content (an assistant turn that only called tools) renders as empty.
 */
public record ChatMessageIn(
        @NotNull @Pattern(regexp = "system|developer|user|assistant|tool", message = "must be one of system, developer, user, assistant, tool")
        String role,
        @JsonDeserialize(using = ContentField.class) String content,
        @Size(max = 256) String name) {
}
