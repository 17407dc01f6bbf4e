package ml.juno.coordinator.tools;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * How a model writes its function calls, and how they are read back from its text. Text that looks like a
 * call but does not parse (bad JSON, no name, arguments that are not an object, a block cut off by
 * {@code max_tokens}) is not a call: it stays in the content verbatim.
 * <ul>
 *   <li>{@link #HERMES}: {@code <tool_call>{"name": …, "arguments": {…}}</tool_call>}, any number, anywhere in the
 *       text (Qwen 2/2.5/3, Hermes, and Juno's own fallback prompt for templates without tool support).</li>
 *   <li>{@link #LLAMA3_JSON}: Llama 3.1/3.2's {@code {"name": …, "parameters": {…}}} as the whole answer, optionally
 *       after {@code <|python_tag|>}; several calls separated by {@code ;} or new lines.</li>
 *   <li>{@link #MISTRAL}: {@code [TOOL_CALLS][{"name": …, "arguments": {…}}, …]}. {@code [TOOL_CALLS]} is a control
 *       token that detokenizes to nothing, so an answer that starts with such a JSON array is read as calls too.</li>
 * </ul>
 */
public enum ToolSyntax {
    HERMES("<tool_call>"),
    LLAMA3_JSON("<|python_tag|>"),
    MISTRAL("[TOOL_CALLS]");

    private static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    static final String HERMES_END = "</tool_call>";

    private final String marker;

    ToolSyntax(String marker) {
        this.marker = marker;
    }

    /** The text that opens a call (for Llama 3 and Mistral a control token, usually invisible in the output). */
    public String marker() {
        return marker;
    }

    /** Reads the calls out of a choice's whole text, with fresh {@code call_…} ids. */
    public ToolOutput parse(String text) {
        return parse(text, ToolIds::next);
    }

    /** As {@link #parse(String)}, ids from {@code ids}. */
    public ToolOutput parse(String text, Supplier<String> ids) {
        return switch (this) {
            case HERMES -> parseHermes(text, ids);
            case LLAMA3_JSON -> parseLlama(text, ids);
            case MISTRAL -> parseMistral(text, ids);
        };
    }

    private static ToolOutput parseHermes(String text, Supplier<String> ids) {
        StringBuilder content = new StringBuilder();
        List<ToolCall> calls = new ArrayList<>();
        int at = 0;
        while (true) {
            int open = text.indexOf(HERMES.marker, at);
            if (open < 0) {
                content.append(text, at, text.length());
                break;
            }
            int close = text.indexOf(HERMES_END, open + HERMES.marker.length());
            ToolCall call = close < 0 ? null : call(text.substring(open + HERMES.marker.length(), close), "arguments", ids);
            if (call == null) { // not a call: keep it as text, look for the next block after its opening tag
                content.append(text, at, open + HERMES.marker.length());
                at = open + HERMES.marker.length();
                continue;
            }
            calls.add(call);
            content.append(text, at, open);
            at = close + HERMES_END.length();
        }
        String c = content.toString().strip();
        return new ToolOutput(c.isEmpty() ? null : c, calls);
    }

    private static ToolOutput parseLlama(String text, Supplier<String> ids) {
        String s = text.strip();
        if (s.startsWith(LLAMA3_JSON.marker)) {
            s = s.substring(LLAMA3_JSON.marker.length()).strip();
        }
        if (!s.startsWith("{")) {
            return ToolOutput.text(text);
        }
        List<ToolCall> calls = new ArrayList<>();
        int at = 0;
        while (at < s.length()) {
            int end = JsonSpans.end(s, at);
            ToolCall call = end < 0 ? null : call(s.substring(at, end), "parameters", ids);
            if (call == null) {
                return ToolOutput.text(text);
            }
            calls.add(call);
            at = end;
            while (at < s.length() && (Character.isWhitespace(s.charAt(at)) || s.charAt(at) == ';')) {
                at++;
            }
            if (at < s.length() && s.charAt(at) != '{') {
                return ToolOutput.text(text);
            }
        }
        return new ToolOutput(null, calls);
    }

    private static ToolOutput parseMistral(String text, Supplier<String> ids) {
        int m = text.indexOf(MISTRAL.marker);
        String before = m < 0 ? "" : text.substring(0, m);
        String rest = (m < 0 ? text : text.substring(m + MISTRAL.marker.length())).strip();
        if (!rest.startsWith("[")) {
            return ToolOutput.text(text);
        }
        int end = JsonSpans.end(rest, 0);
        if (end < 0 || !rest.substring(end).isBlank()) {
            return ToolOutput.text(text);
        }
        JsonNode array;
        try {
            array = JSON.readTree(rest.substring(0, end));
        } catch (JsonProcessingException e) {
            return ToolOutput.text(text);
        }
        if (array.isEmpty()) {
            return ToolOutput.text(text);
        }
        List<ToolCall> calls = new ArrayList<>();
        for (JsonNode item : array) {
            ToolCall call = call(item, "arguments", ids);
            if (call == null) {
                return ToolOutput.text(text);
            }
            calls.add(call);
        }
        String c = before.strip();
        return new ToolOutput(c.isEmpty() ? null : c, calls);
    }

    private static ToolCall call(String json, String altArguments, Supplier<String> ids) {
        try {
            return call(JSON.readTree(json.strip()), altArguments, ids);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            return null;
        }
    }

    /** {@code {"name": string, "arguments"|alt: object or a string holding one}}; null if it is not that. */
    private static ToolCall call(JsonNode node, String altArguments, Supplier<String> ids) {
        if (node == null || !node.isObject() || !node.path("name").isTextual() || node.path("name").asText().isEmpty()) {
            return null;
        }
        JsonNode args = node.has("arguments") ? node.get("arguments") : node.get(altArguments);
        if (args == null) {
            args = JSON.createObjectNode(); // a function without parameters
        } else if (args.isTextual()) {
            try {
                args = JSON.readTree(args.asText());
            } catch (JsonProcessingException e) {
                return null;
            }
        }
        if (args == null || !args.isObject()) {
            return null;
        }
        try {
            return new ToolCall(ids.get(), node.get("name").asText(), JSON.writeValueAsString(args));
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    /**
     * Streaming: how much of the text not yet sent is surely content.
     *
     * @param safe     characters of {@code pending} that are content whatever follows
     * @param holdRest whether everything after them is (or starts) a call and is held until the answer ends
     */
    record Split(int safe, boolean holdRest) {
    }

    /**
     * Splits {@code pending}, the answer's text from the first character not yet sent.
     *
     * @param startOfAnswer whether nothing but whitespace came before {@code pending}
     */
    Split split(String pending, boolean startOfAnswer) {
        if (startOfAnswer && this != HERMES) {
            String s = pending.stripLeading();
            if (s.isEmpty()) {
                return new Split(0, false);
            }
            if (this == LLAMA3_JSON) {
                if (s.charAt(0) == '{' || s.startsWith(marker)) {
                    return new Split(0, true);
                }
                return marker.startsWith(s) ? new Split(0, false) : new Split(pending.length(), false);
            }
            if (s.charAt(0) == '[') { // MISTRAL: the marker, or the call array after an invisible marker
                return s.length() < marker.length() && marker.startsWith(s) ? new Split(0, false) : new Split(0, true);
            }
        }
        if (this == LLAMA3_JSON) {
            return new Split(pending.length(), false); // an answer that starts as text has no calls
        }
        int m = pending.indexOf(marker);
        if (m >= 0) {
            return new Split(m, true);
        }
        for (int k = Math.min(marker.length() - 1, pending.length()); k > 0; k--) {
            if (pending.endsWith(marker.substring(0, k))) {
                return new Split(pending.length() - k, false);
            }
        }
        return new Split(pending.length(), false);
    }
}
