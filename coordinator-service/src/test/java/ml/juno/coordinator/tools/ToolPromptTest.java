package ml.juno.coordinator.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import ml.juno.coordinator.tokenizer.BuiltinChatTemplate;
import ml.juno.coordinator.tokenizer.ChatMessage;
import ml.juno.coordinator.tokenizer.ChatRequest;
import ml.juno.coordinator.tokenizer.ChatTemplate;
import ml.juno.coordinator.tokenizer.ChatTemplates;
import ml.juno.coordinator.tokenizer.JinjaChatTemplate;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;
import org.junit.jupiter.api.Test;

/** Tools through real templates: a model file's own (phi-3, no tool support: the fallback), the built-ins, and tool-aware Jinja. */
class ToolPromptTest {

    /** A map in the order given (as a JSON body arrives). */
    static Map<String, Object> ordered(Object... kv) {
        Map<String, Object> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    static final Map<String, Object> WEATHER = ordered("type", "function", "function", ordered("name", "get_weather",
            "description", "Weather in a city", "parameters", ordered("type", "object", "properties",
                    ordered("city", ordered("type", "string")), "required", List.of("city"))));

    /** A round trip: the user asks, the assistant called, the tool answered. */
    static final List<ChatMessage> ROUND = List.of(
            ChatMessage.user("Weather in Paris?"),
            new ChatMessage("assistant", null, Map.of("tool_calls", List.of(Map.of("id", "call_1", "type", "function",
                    "function", Map.of("name", "get_weather", "arguments", "{\"city\":\"Paris\"}"))))),
            new ChatMessage("tool", "{\"temp\":21}", Map.of("tool_call_id", "call_1")));

    /** Written for this test in the style of Qwen 2.5's template: tools in the system turn, calls as tool_call blocks. */
    static final String HERMES_TEMPLATE = """
            {%- if tools %}<|im_start|>system
            Tools:
            {%- for tool in tools %}
            {{ tool | tojson }}
            {%- endfor %}
            Answer calls as <tool_call>{"name": ..., "arguments": ...}</tool_call><|im_end|>
            {% endif %}
            {%- for message in messages %}
            {%- if message.role == "tool" %}<|im_start|>user
            <tool_response>{{ message.content }}</tool_response><|im_end|>
            {% elif message.tool_calls %}<|im_start|>assistant
            {%- for call in message.tool_calls %}
            <tool_call>{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}</tool_call>
            {%- endfor %}<|im_end|>
            {% else %}<|im_start|>{{ message.role }}
            {{ message.content }}<|im_end|>
            {% endif %}
            {%- endfor %}
            {%- if add_generation_prompt %}<|im_start|>assistant
            {% endif %}""";

    static Path models() {
        return Path.of(System.getProperty("juno.models.dir"));
    }

    static ChatTemplate templateOf(String file) throws IOException {
        Path p;
        try (Stream<Path> s = Files.walk(models())) {
            p = s.filter(f -> f.getFileName().toString().equals(file)).findFirst().orElseThrow();
        }
        try (GgufFile g = GgufFile.open(p)) {
            return ChatTemplates.forModel(g.metadata(), Tokenizer.fromGguf(g));
        }
    }

    @Test
    void nativeSyntax_isReadFromTheTemplateSource() {
        assertEquals(ToolSyntax.HERMES, ToolPrompt.nativeSyntax(HERMES_TEMPLATE));
        assertEquals(ToolSyntax.MISTRAL, ToolPrompt.nativeSyntax("{% if tools %}[AVAILABLE_TOOLS]{% endif %}[TOOL_CALLS]"));
        assertEquals(ToolSyntax.LLAMA3_JSON, ToolPrompt.nativeSyntax("{% if tools %}{% endif %}<|start_header_id|>ipython"));
        assertEquals(null, ToolPrompt.nativeSyntax("{% for m in messages %}{{ m.content }}{% endfor %}"));
        assertEquals(null, ToolPrompt.nativeSyntax("<tool_call> but never reads the tool list"));
    }

    @Test
    void phi3ModelTemplate_hasNoToolSupportAndDropsSystemTurns_getsTheFallbackBlockInTheFirstUserTurn() throws IOException {
        ChatTemplate phi3 = templateOf("ggml-vocab-phi-3.gguf");
        ToolPrompt tp = ToolPrompt.of(phi3);
        assertFalse(tp.nativeTemplate());
        assertFalse(tp.systemShown(), "phi-3's template renders no system message");
        assertEquals(ToolSyntax.HERMES, tp.syntax());
        ChatRequest r = tp.request(List.of(ChatMessage.system("Be brief."), ChatMessage.user("Weather in Paris?")), List.of(WEATHER), true);
        assertTrue(r.tools().isEmpty(), "the template does not take tools itself");
        String prompt = phi3.render(r);
        assertTrue(prompt.startsWith("<s><|user|>\n# Tools\nFunctions you may call:\n<tools>\n{\"name\":\"get_weather\","), prompt);
        assertTrue(prompt.contains("\"name\":\"get_weather\"") && prompt.contains("<tool_call>"), prompt);
        assertTrue(prompt.contains("</tool_call>.\n\nWeather in Paris?<|end|>\n<|assistant|>\n"), prompt);
    }

    @Test
    void templateThatShowsSystem_getsTheBlockAddedToTheSystemMessage() {
        ChatTemplate chatml = BuiltinChatTemplate.CHATML.bind("", "");
        ToolPrompt tp = ToolPrompt.of(chatml);
        assertTrue(tp.systemShown());
        String prompt = chatml.render(tp.request(List.of(ChatMessage.system("Be brief."), ChatMessage.user("Hi")), List.of(WEATHER), true));
        assertTrue(prompt.startsWith("<|im_start|>system\nBe brief.\n\n# Tools\n"), prompt);
        assertTrue(prompt.endsWith("</tool_call>.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"), prompt);
    }

    @Test
    void builtinLlama2_rendersARoundTripThroughTheFallback() {
        ChatTemplate llama2 = BuiltinChatTemplate.LLAMA2.bind("<s>", "</s>");
        ChatRequest r = ToolPrompt.of(llama2).request(ROUND, List.of(WEATHER), true);
        String prompt = llama2.render(r); // a "tool" role would be refused by this format without the fallback
        assertTrue(prompt.startsWith("<s>[INST] <<SYS>>\n# Tools"), prompt);
        assertTrue(prompt.contains("[/INST] <tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}\n</tool_call> </s>"), prompt);
        assertTrue(prompt.endsWith("<s>[INST] <tool_response>\n{\"temp\":21}\n</tool_response> [/INST]"), prompt);
    }

    @Test
    void bundledModel_fallbackPromptWithTwoTools_leavesRoomForACallInItsContext() throws IOException {
        Path file;
        try (Stream<Path> s = Files.walk(models())) {
            file = s.filter(f -> f.getFileName().toString().equals("stories260K.gguf")).findFirst().orElseThrow();
        }
        try (GgufFile g = GgufFile.open(file)) {
            Tokenizer tok = Tokenizer.fromGguf(g);
            ChatTemplate t = ChatTemplates.forModel(g.metadata(), tok);
            // the tools of src-test-e2e/js/tools-check.mjs
            Map<String, Object> weather = ordered("type", "function", "function", ordered("name", "get_weather", "parameters",
                    ordered("type", "object", "properties", ordered("city", ordered("type", "string", "maxLength", 6),
                            "unit", ordered("enum", List.of("c", "f"))), "required", List.of("city", "unit"))));
            Map<String, Object> time = ordered("type", "function", "function", ordered("name", "get_time", "parameters",
                    ordered("type", "object", "properties", ordered("zone", ordered("enum", List.of("UTC", "CET"))), "required", List.of("zone"))));
            String prompt = t.render(ToolPrompt.of(t).request(List.of(ChatMessage.user("Weather in Paris?")), List.of(weather, time), true));
            int tokens = ChatTemplates.encodePrompt(tok, prompt).length;
            System.out.println("stories260K fallback prompt, two tools: " + tokens + " tokens, " + prompt.length() + " chars");
            assertTrue(tokens < 400, tokens + " tokens of a 512-token context"); // a forced call takes up to about 80
        }
    }

    @Test
    void toolAwareJinja_getsToolsAndParsedArgumentsAsHuggingFacePassesThem() {
        ChatTemplate t = new JinjaChatTemplate(HERMES_TEMPLATE, "", "<|im_end|>", List.of("<|im_end|>"));
        ToolPrompt tp = ToolPrompt.of(t);
        assertTrue(tp.nativeTemplate());
        String prompt = t.render(tp.request(ROUND, List.of(WEATHER), true));
        assertTrue(prompt.startsWith("<|im_start|>system\nTools:{\"type\": \"function\", \"function\": {"), prompt);
        assertTrue(prompt.contains("\"name\": \"get_weather\""), prompt);
        // arguments came as the JSON string OpenAI clients send; the template sees an object, so tojson prints it once
        assertTrue(prompt.contains("<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"), prompt);
        assertTrue(prompt.contains("<tool_response>{\"temp\":21}</tool_response>"), prompt);
        assertTrue(prompt.endsWith("<|im_start|>assistant\n"), prompt);
    }

    @Test
    void noTools_plainConversationRendersAsBefore() {
        ChatTemplate chatml = BuiltinChatTemplate.CHATML.bind("", "");
        List<ChatMessage> plain = List.of(ChatMessage.user("Hi"));
        assertEquals(chatml.render(new ChatRequest(plain, true)), chatml.render(ToolPrompt.of(chatml).request(plain, List.of(), true)));
    }
}
