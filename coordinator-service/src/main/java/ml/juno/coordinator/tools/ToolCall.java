package ml.juno.coordinator.tools;

import java.util.Objects;

/**
 * One function call the model made.
 *
 * @param id        {@code call_…}, unique per call
 * @param name      the function's name
 * @param arguments the arguments as a compact JSON object text (OpenAI sends them as a string)
 */
public record ToolCall(String id, String name, String arguments) {
    public ToolCall {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }
}
