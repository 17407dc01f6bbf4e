package ml.juno.coordinator.api.dto;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * One message of a chat request. {@code content} is a string or an array of text parts ({@link ContentField});
 * user, system and developer messages must have it ({@link RequestMapping#chatPrompt}); {@code null} content (an
 * assistant turn that only called tools) renders as empty. {@code tool_calls} (assistant turns) and
 * {@code tool_call_id} ({@code tool} turns, required there) carry an earlier round of tool calling.
 */
public record ChatMessageIn(
        @NotNull @Pattern(regexp = "system|developer|user|assistant|tool", message = "must be one of system, developer, user, assistant, tool")
        @Schema(description = "system, developer (treated as system), user, assistant or tool.")
        String role,
        @Schema(description = "A string or an array of {\"type\":\"text\",\"text\":...} parts (joined with newlines). Required for user, system and developer messages.")
        @JsonDeserialize(using = ContentField.class) String content,
        @Schema(description = "An optional participant name; not rendered by most chat templates.")
        @Size(max = 256) String name,
        @Schema(description = "An assistant turn's earlier tool calls (then content may be null).")
        @JsonProperty("tool_calls") @Size(max = 128) List<@NotNull @Valid ToolCallIn> toolCalls,
        @Schema(description = "A tool turn's answer to the call with this id (required on role tool).")
        @JsonProperty("tool_call_id") @Size(min = 1, max = 256) String toolCallId) {
}
