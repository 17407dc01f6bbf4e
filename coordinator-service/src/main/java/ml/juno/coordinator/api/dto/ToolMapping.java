package ml.juno.coordinator.api.dto;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import ml.juno.coordinator.grammar.Grammar;
import ml.juno.coordinator.grammar.GrammarException;
import ml.juno.coordinator.service.GenerationOptions;
import ml.juno.coordinator.service.InvalidRequestException;
import ml.juno.coordinator.service.PromptInput;
import ml.juno.coordinator.tokenizer.ChatMessage;
import ml.juno.coordinator.tokenizer.ChatRequest;
import ml.juno.coordinator.tokenizer.ChatTemplate;
import ml.juno.coordinator.tools.ToolChoice;
import ml.juno.coordinator.tools.ToolGrammar;
import ml.juno.coordinator.tools.ToolOutput;
import ml.juno.coordinator.tools.ToolPrompt;
import ml.juno.coordinator.tools.ToolSyntax;

/**
 * A chat request's {@code tools}, {@code tool_choice}, {@code parallel_tool_calls} and tool turns, checked and turned
 * into a {@link Plan}: what the prompt shows and how the answer is read back.
 */
public final class ToolMapping {

    private ToolMapping() {
    }

    /**
     * @param prompt   how the template takes tools, and the call syntax
     * @param shown    the tools the prompt shows (OpenAI shape); empty when there are none or {@code tool_choice} is none
     * @param choice   the request's tool_choice (auto when tools are given without one)
     * @param parallel whether several calls may come back
     * @param grammar  for a forced call ({@code required} or a named function), what decoding is constrained to; else null
     */
    public record Plan(ToolPrompt prompt, List<Map<String, Object>> shown, ToolChoice choice, boolean parallel, Grammar grammar) {

        /** {@code options} constrained to this plan's forced call, if it has one. */
        public GenerationOptions constrain(GenerationOptions options) {
            if (grammar == null) {
                return options;
            }
            if (options.grammar() != null) {
                throw new InvalidRequestException("tool_choice", "a forced tool call cannot be combined with another constraint "
                        + "(response_format or grammar)");
            }
            return options.withGrammar(grammar);
        }

        /** Whether answers are read for calls (tools shown); otherwise the answer is plain text. */
        public boolean parses() {
            return !shown.isEmpty();
        }

        public ToolSyntax syntax() {
            return prompt.syntax();
        }

        /** A choice's text read for calls (at most one unless parallel), or null when this request does not parse. */
        public ToolOutput output(String text) {
            if (!parses()) {
                return null;
            }
            ToolOutput out = prompt.syntax().parse(text);
            return parallel ? out : out.firstCallOnly();
        }

        /** The conversation as the chat template renders it. */
        public PromptInput.Chat prompt(List<ChatMessage> messages) {
            ChatRequest r = prompt.request(messages, shown, true);
            return new PromptInput.Chat(r.messages(), r.tools());
        }
    }

    /** Checks the tool fields of {@code r} and plans them for {@code template}. */
    public static Plan plan(ChatCompletionRequest r, ChatTemplate template) {
        List<ChatTool> tools = r.tools() == null ? List.of() : r.tools();
        if (tools.isEmpty()) {
            if (r.toolChoice() != null) {
                throw new InvalidRequestException("tool_choice", "tool_choice is only allowed when tools are specified");
            }
            if (r.parallelToolCalls() != null) {
                throw new InvalidRequestException("parallel_tool_calls", "parallel_tool_calls is only allowed when tools are specified");
            }
        }
        Set<String> names = new HashSet<>();
        List<Map<String, Object>> shown = new ArrayList<>();
        for (ChatTool t : tools) {
            if (!names.add(t.function().name())) {
                throw new InvalidRequestException("tools", "tools has two functions named '" + t.function().name() + "'");
            }
            Object params = t.function().parameters();
            if (params != null && ((Map<?, ?>) params).containsKey("type") && !"object".equals(((Map<?, ?>) params).get("type"))) {
                throw new InvalidRequestException("tools", "the parameters of function '" + t.function().name()
                        + "' must be a JSON schema of type object");
            }
            shown.add(openAiShape(t));
        }
        ToolChoice choice = r.toolChoice() != null ? r.toolChoice() : ToolChoice.AUTO;
        if (choice instanceof ToolChoice.Named n && !names.contains(n.name())) {
            throw new InvalidRequestException("tool_choice", "tool_choice names function '" + n.name() + "', which is not among the tools");
        }
        if (choice instanceof ToolChoice.None) {
            shown = List.of();
        }
        if (!shown.isEmpty() && Boolean.TRUE.equals(r.logprobs())) {
            throw new InvalidRequestException("logprobs", "logprobs together with tools is not supported");
        }
        ToolPrompt prompt = ToolPrompt.of(template);
        // a named function is one call (as OpenAI answers it); otherwise as many as parallel_tool_calls allows
        boolean parallel = !Boolean.FALSE.equals(r.parallelToolCalls()) && !(choice instanceof ToolChoice.Named);
        Grammar grammar = null;
        if (choice.forced()) {
            List<ToolGrammar.Function> allowed = new ArrayList<>();
            for (ChatTool t : tools) {
                if (!(choice instanceof ToolChoice.Named n) || n.name().equals(t.function().name())) {
                    allowed.add(new ToolGrammar.Function(t.function().name(), schemaText(t)));
                }
            }
            try {
                grammar = ToolGrammar.compile(prompt.syntax(), allowed, parallel);
            } catch (GrammarException e) {
                throw new InvalidRequestException("tools", "a forced call is constrained by the functions' parameters, "
                        + "and one of them cannot be: " + e.getMessage());
            }
        }
        return new Plan(prompt, shown, choice, parallel, grammar);
    }

    private static String schemaText(ChatTool t) {
        Object params = t.function().parameters() != null ? t.function().parameters() : Map.of("type", "object", "properties", Map.of());
        try {
            return SCHEMA_JSON.writeValueAsString(params);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new InvalidRequestException("tools", "the parameters of function '" + t.function().name() + "' are not JSON");
        }
    }

    private static final com.fasterxml.jackson.databind.ObjectMapper SCHEMA_JSON = new com.fasterxml.jackson.databind.ObjectMapper();

    /** {@code {"type":"function","function":{"name","description","parameters"}}}, what templates expect. */
    private static Map<String, Object> openAiShape(ChatTool t) {
        Map<String, Object> fn = new LinkedHashMap<>();
        fn.put("name", t.function().name());
        if (t.function().description() != null) {
            fn.put("description", t.function().description());
        }
        fn.put("parameters", t.function().parameters() != null ? t.function().parameters()
                : Map.of("type", "object", "properties", Map.of()));
        Map<String, Object> tool = new LinkedHashMap<>();
        tool.put("type", "function");
        tool.put("function", fn);
        return tool;
    }

    /** The request's messages as template turns, earlier calls and results in their fields. */
    public static List<ChatMessage> messages(ChatCompletionRequest r) {
        List<ChatMessage> out = new ArrayList<>(r.messages().size());
        for (int i = 0; i < r.messages().size(); i++) {
            ChatMessageIn m = r.messages().get(i);
            String field = "messages[" + i + "]";
            if (m.content() == null && !"assistant".equals(m.role()) && !"tool".equals(m.role())) {
                throw new InvalidRequestException(field + ".content", "Invalid '" + field + ".content': a " + m.role() + " message needs content");
            }
            Map<String, Object> fields = new LinkedHashMap<>();
            if (m.toolCalls() != null && !m.toolCalls().isEmpty()) {
                if (!m.role().equals("assistant")) {
                    throw new InvalidRequestException(field + ".tool_calls", "only assistant messages carry tool_calls");
                }
                List<Map<String, Object>> calls = new ArrayList<>();
                for (ToolCallIn c : m.toolCalls()) {
                    Map<String, Object> fn = new LinkedHashMap<>();
                    fn.put("name", c.function().name());
                    fn.put("arguments", c.function().arguments());
                    Map<String, Object> call = new LinkedHashMap<>();
                    call.put("id", c.id());
                    call.put("type", "function");
                    call.put("function", fn);
                    calls.add(call);
                }
                fields.put("tool_calls", calls);
            }
            if (m.role().equals("tool")) {
                if (m.toolCallId() == null) {
                    throw new InvalidRequestException(field + ".tool_call_id", "a tool message needs the tool_call_id it answers");
                }
                fields.put("tool_call_id", m.toolCallId());
            } else if (m.toolCallId() != null) {
                throw new InvalidRequestException(field + ".tool_call_id", "only tool messages carry tool_call_id");
            }
            if (m.name() != null) {
                fields.put("name", m.name());
            }
            // "developer" is OpenAI's newer name for the system role; chat templates know "system"
            out.add(new ChatMessage("developer".equals(m.role()) ? "system" : m.role(), m.content(), fields));
        }
        return out;
    }
}
