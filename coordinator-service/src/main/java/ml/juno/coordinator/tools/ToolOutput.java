package ml.juno.coordinator.tools;

import java.util.List;

/**
 * A choice's text split into what the model said and the calls it made.
 *
 * @param content the text outside the calls, stripped; {@code null} when nothing is left (only calls)
 * @param calls   the calls, in order; empty when the model made none (or its call text was malformed, which
 *                then stays in {@code content} verbatim)
 */
public record ToolOutput(String content, List<ToolCall> calls) {
    public ToolOutput {
        calls = List.copyOf(calls);
    }

    /** Plain text: no calls. */
    public static ToolOutput text(String text) {
        String s = text.strip();
        return new ToolOutput(s.isEmpty() ? null : s, List.of());
    }

    /** At most the first call (for {@code parallel_tool_calls: false}). */
    public ToolOutput firstCallOnly() {
        return calls.size() <= 1 ? this : new ToolOutput(content, calls.subList(0, 1));
    }
}
