package ml.juno.coordinator.tools;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.tokenizer.ChatMessage;
import ml.juno.coordinator.tokenizer.ChatRequest;
import ml.juno.coordinator.tokenizer.ChatTemplate;
import ml.juno.coordinator.tokenizer.JinjaChatTemplate;

/**
 * How tools reach the model's prompt, and which syntax its calls come back in.
 * <p>A model's own Jinja template that handles tools (it reads {@code tools} and writes one of the known call
 * syntaxes: {@code <tool_call>} → {@link ToolSyntax#HERMES}, {@code [TOOL_CALLS]} → {@link ToolSyntax#MISTRAL},
 * {@code <|python_tag|>} or an {@code ipython} role → {@link ToolSyntax#LLAMA3_JSON}) gets them as Hugging Face's
 * {@code apply_chat_template} passes them: {@code tools} in OpenAI's shape, assistant messages with
 * {@code tool_calls} (their {@code arguments} parsed into objects), {@code tool} messages with
 * {@code tool_call_id}. Every other template (built-in formats, Jinja templates without tools) gets the
 * <em>fallback</em>: a system block that lists the functions as JSON and asks for Hermes-style
 * {@code <tool_call>} blocks, earlier calls written back as such blocks, tool results as user turns wrapped in
 * {@code <tool_response>}; the answer is read with {@link ToolSyntax#HERMES}. A template that drops system messages
 * (phi-3's does) gets the block at the top of the first user turn instead (found by rendering a probe once per template).
 *
 * @param syntax         the syntax calls are parsed with
 * @param nativeTemplate whether the model's template renders tools itself
 * @param systemShown    whether the template renders a system message (where the fallback puts its block)
 */
public record ToolPrompt(ToolSyntax syntax, boolean nativeTemplate, boolean systemShown) {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROBE = "juno-probe-7f3a";
    private static final Map<ChatTemplate, Boolean> SYSTEM_SHOWN = java.util.Collections.synchronizedMap(new java.util.WeakHashMap<>());

    /** The tool handling of a chat template. */
    public static ToolPrompt of(ChatTemplate template) {
        if (template instanceof JinjaChatTemplate j) {
            ToolSyntax s = nativeSyntax(j.source());
            if (s != null) {
                return new ToolPrompt(s, true, true);
            }
        }
        return new ToolPrompt(ToolSyntax.HERMES, false, SYSTEM_SHOWN.computeIfAbsent(template, ToolPrompt::showsSystem));
    }

    private static boolean showsSystem(ChatTemplate t) {
        try {
            return t.render(new ChatRequest(List.of(ChatMessage.system(PROBE), ChatMessage.user("x")), true)).contains(PROBE);
        } catch (RuntimeException e) { // refuses system messages
            return false;
        }
    }

    /** The call syntax a Jinja template's source writes, or null when it does not handle tools. */
    static ToolSyntax nativeSyntax(String source) {
        if (!source.contains("tools")) {
            return null;
        }
        if (source.contains("[TOOL_CALLS]")) {
            return ToolSyntax.MISTRAL;
        }
        if (source.contains("<tool_call>")) {
            return ToolSyntax.HERMES;
        }
        if (source.contains("<|python_tag|>") || source.contains("ipython")) {
            return ToolSyntax.LLAMA3_JSON;
        }
        return null;
    }

    /**
     * What the template renders.
     *
     * @param messages the conversation, assistant calls in {@code fields.tool_calls} (OpenAI shape,
     *                 {@code arguments} a JSON string or object), tool results with {@code fields.tool_call_id}
     * @param tools    the tools to show, OpenAI shape ({@code {"type":"function","function":{…}}}); empty for none
     */
    public ChatRequest request(List<ChatMessage> messages, List<Map<String, Object>> tools, boolean addGenerationPrompt) {
        if (nativeTemplate) {
            List<ChatMessage> out = new ArrayList<>(messages.size());
            for (ChatMessage m : messages) {
                out.add(withParsedArguments(m));
            }
            return new ChatRequest(out, addGenerationPrompt, tools);
        }
        return new ChatRequest(fallback(messages, tools, systemShown), addGenerationPrompt);
    }

    /** Hugging Face templates expect {@code tool_calls[].function.arguments} as an object, OpenAI sends a string. */
    private static ChatMessage withParsedArguments(ChatMessage m) {
        if (!(m.fields().get("tool_calls") instanceof List<?> calls)) {
            return m;
        }
        List<Object> parsed = new ArrayList<>();
        for (Object c : calls) {
            if (c instanceof Map<?, ?> call && call.get("function") instanceof Map<?, ?> fn && fn.get("arguments") instanceof String s) {
                Map<String, Object> f = new LinkedHashMap<>();
                fn.forEach((k, v) -> f.put(String.valueOf(k), v));
                f.put("arguments", parseObject(s));
                Map<String, Object> copy = new LinkedHashMap<>();
                call.forEach((k, v) -> copy.put(String.valueOf(k), v));
                copy.put("function", f);
                parsed.add(copy);
            } else {
                parsed.add(c);
            }
        }
        Map<String, Object> fields = new LinkedHashMap<>(m.fields());
        fields.put("tool_calls", parsed);
        return new ChatMessage(m.role(), m.content(), fields);
    }

    private static Object parseObject(String json) {
        try {
            Object v = JSON.readValue(json, Object.class);
            return v instanceof Map ? v : json;
        } catch (JsonProcessingException e) {
            return json; // not JSON: the template gets the text as the client sent it
        }
    }

    /** The fallback: tools in a system block, calls and results as plain text the built-in formats can render. */
    static List<ChatMessage> fallback(List<ChatMessage> messages, List<Map<String, Object>> tools, boolean systemShown) {
        List<ChatMessage> out = new ArrayList<>(messages.size() + 1);
        String pending = null; // the block, for the first user turn when the template shows no system message
        if (!tools.isEmpty()) {
            String block = toolsBlock(tools);
            if (!systemShown) {
                pending = block;
            } else if (!messages.isEmpty() && messages.get(0).role().equals("system")) {
                out.add(ChatMessage.system(messages.get(0).content() + "\n\n" + block));
                messages = messages.subList(1, messages.size());
            } else {
                out.add(ChatMessage.system(block));
            }
        }
        for (ChatMessage m : messages) {
            if (m.role().equals("tool")) {
                out.add(ChatMessage.user("<tool_response>\n" + m.content() + "\n</tool_response>"));
            } else if (m.fields().get("tool_calls") instanceof List<?> calls && !calls.isEmpty()) {
                StringBuilder sb = new StringBuilder(m.content());
                for (Object c : calls) {
                    if (c instanceof Map<?, ?> call && call.get("function") instanceof Map<?, ?> fn) {
                        Map<String, Object> written = new LinkedHashMap<>();
                        written.put("name", fn.get("name"));
                        Object args = fn.get("arguments");
                        written.put("arguments", args instanceof String s ? parseObject(s) : args);
                        if (!sb.isEmpty()) {
                            sb.append('\n');
                        }
                        sb.append(ToolSyntax.HERMES.marker()).append('\n').append(json(written)).append('\n').append(ToolSyntax.HERMES_END);
                    }
                }
                out.add(new ChatMessage(m.role(), sb.toString()));
            } else if (pending != null && m.role().equals("user")) {
                out.add(ChatMessage.user(pending + "\n\n" + m.content()));
                pending = null;
            } else {
                out.add(m.fields().isEmpty() ? m : new ChatMessage(m.role(), m.content()));
            }
        }
        if (pending != null) {
            out.add(0, ChatMessage.user(pending));
        }
        return out;
    }

    /** The fallback's description of the tools (Juno's own wording; short, for small contexts): one function per line. */
    static String toolsBlock(List<Map<String, Object>> tools) {
        StringBuilder sb = new StringBuilder("# Tools\nFunctions you may call:\n<tools>\n");
        for (Map<String, Object> t : tools) {
            sb.append(json(t.get("function"))).append('\n');
        }
        return sb.append("</tools>\nTo call one, write <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>.").toString();
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("tool description is not JSON: " + e.getMessage(), e);
        }
    }
}
