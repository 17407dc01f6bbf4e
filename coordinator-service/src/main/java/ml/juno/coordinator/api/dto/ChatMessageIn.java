package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.List;

/**
 * One message of a chat request. {@code content} is a string or an array of text parts ({@link ContentField});
 * {@code null} content (an assistant turn that only called tools) renders as empty. {@code tool_calls} (assistant turns)
 * and {@code tool_call_id} ({@code tool} turns, required there) carry an earlier round of tool calling.
 */
public record ChatMessageIn(
        @NotNull @Pattern(regexp = "system|developer|user|assistant|tool", message = "must be one of system, developer, user, assistant, tool")
        String role,
        @JsonDeserialize(using = ContentField.class) String content,
        @Size(max = 256) String name,
        @JsonProperty("tool_calls") @Size(max = 128) List<@NotNull @Valid ToolCallIn> toolCalls,
        @JsonProperty("tool_call_id") @Size(min = 1, max = 256) String toolCallId) {
}
