package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ChatTemplateTest {
    private static final List<ChatMessage> CONVERSATION = List.of(
            ChatMessage.system("You are a helpful assistant."),
            ChatMessage.user("Hello!"),
            ChatMessage.assistant("Hi there. How can I help?"),
            ChatMessage.user("Tell me a joke."));

    private static ChatTemplate forFile(String name) throws IOException {
        try (GgufFile f = GgufFile.open(TestModels.find(name))) {
            return ChatTemplates.forModel(f.metadata(), TestModels.tokenizer(name));
        }
    }

    @Test
    void phi3EmbeddedTemplate_rendersMultiTurnLikeHuggingFace() throws IOException {
        ChatTemplate t = forFile("ggml-vocab-phi-3.gguf");
        assertInstanceOf(JinjaChatTemplate.class, t);
        // the template writes bos_token, then per user turn "<|user|>\n{content}<|end|>\n<|assistant|>\n" and
        // per assistant turn "{content}<|end|>\n"; it has no branch for system messages, so they vanish
        String expected = "<s><|user|>\nHello!<|end|>\n<|assistant|>\nHi there. How can I help?<|end|>\n"
                + "<|user|>\nTell me a joke.<|end|>\n<|assistant|>\n";
        assertEquals(expected, t.render(new ChatRequest(CONVERSATION, true)));
    }

    @Test
    void phi3RenderedPrompt_tokenizesWithOneBosAndControlTokens() throws IOException {
        Tokenizer tok = TestModels.tokenizer("ggml-vocab-phi-3.gguf");
        String prompt = forFile("ggml-vocab-phi-3.gguf").render(new ChatRequest(CONVERSATION, true));
        int[] ids = ChatTemplates.encodePrompt(tok, prompt);
        int user = tok.tokenId("<|user|>");
        int end = tok.tokenId("<|end|>");
        int assistant = tok.tokenId("<|assistant|>");
        assertEquals(tok.bos(), ids[0]);
        assertEquals(user, ids[1]);
        assertTrue(ids[2] != tok.bos(), "no second BOS");
        assertEquals(assistant, ids[ids.length - 1]);
        assertEquals(3, Arrays.stream(ids).filter(i -> i == end).count());
        assertTrue(tok.isEndOfGeneration(end), "<|end|> stops generation");
        assertTrue(forFile("ggml-vocab-phi-3.gguf").stopStrings().contains("<|end|>"));
    }

    @ParameterizedTest
    @CsvSource({
            "tiny-qwen2-random-F16.gguf, chatml",
            "tiny-qwen3-random-F16.gguf, chatml",
            "tiny-qwen3moe-random-F16.gguf, chatml",
            "tiny-phi3-random-F16.gguf, phi3",
            "tiny-gemma3-random-F16.gguf, gemma",
            "tiny-llama-random-F16.gguf, llama2",
            "stories260K.gguf, llama2"})
    void modelWithoutTemplate_getsBuiltinChosenByArchitecture(String file, String expected) throws IOException {
        try (GgufFile f = GgufFile.open(TestModels.find(file))) {
            assertTrue(!f.metadata().has(GgufKeys.TOKENIZER_CHAT_TEMPLATE), file + " has no template");
        }
        assertEquals(expected, forFile(file).name());
    }

    @Test
    void builtinChatml_rendersTurnsAndGenerationPrompt() {
        String out = BuiltinChatTemplate.CHATML.bind("", "").render(new ChatRequest(CONVERSATION.subList(0, 2), true));
        assertEquals("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n"
                + "<|im_start|>assistant\n", out);
    }

    @Test
    void builtinLlama3_wrapsTurnsInHeaders() {
        String out = BuiltinChatTemplate.LLAMA3.bind("<|begin_of_text|>", "<|end_of_text|>")
                .render(new ChatRequest(List.of(ChatMessage.user(" Hi ")), true));
        assertEquals("<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
                + "<|start_header_id|>assistant<|end_header_id|>\n\n", out);
    }

    @Test
    void builtinLlama2_putsSystemInFirstInstruction() {
        String out = BuiltinChatTemplate.LLAMA2.bind("<s>", "</s>").render(new ChatRequest(CONVERSATION, true));
        assertEquals("<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nHello! [/INST] "
                + "Hi there. How can I help? </s><s>[INST] Tell me a joke. [/INST]", out);
    }

    @Test
    void builtinMistralZephyrGemmaPhi3_renderTheirMarkers() {
        ChatRequest r = new ChatRequest(CONVERSATION.subList(0, 3), true);
        assertEquals("<s>[INST] You are a helpful assistant.\n\nHello! [/INST]Hi there. How can I help?</s>",
                BuiltinChatTemplate.MISTRAL.bind("<s>", "</s>").render(r));
        assertEquals("<|system|>\nYou are a helpful assistant.</s>\n<|user|>\nHello!</s>\n<|assistant|>\n"
                + "Hi there. How can I help?</s>\n<|assistant|>\n", BuiltinChatTemplate.ZEPHYR.bind("<s>", "</s>").render(r));
        assertEquals("<bos><start_of_turn>user\nYou are a helpful assistant.\n\nHello!<end_of_turn>\n<start_of_turn>model\n"
                + "Hi there. How can I help?<end_of_turn>\n<start_of_turn>model\n",
                BuiltinChatTemplate.GEMMA.bind("<bos>", "<eos>").render(r));
        assertEquals("<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\n"
                + "Hi there. How can I help?<|end|>\n<|assistant|>\n", BuiltinChatTemplate.PHI3.bind("<s>", "</s>").render(r));
    }

    @Test
    void jinja_supportsHuggingFaceIdioms() {
        String src = """
                {%- set ns = namespace(system='') -%}
                {%- for m in messages -%}
                  {%- if m['role'] == 'system' -%}{%- set ns.system = m['content'].strip() -%}{%- endif -%}
                {%- endfor -%}
                [{{ ns.system }}]
                {% for m in messages[1:] %}
                {{ m.role.upper() }}:{{ m.content.startswith('Hel') }}:{{ m.content.endswith('?') }}:{{ m.content.split(' ')[0] }}{% if not loop.last %},{% endif %}
                {% endfor %}
                {% if add_generation_prompt %}{{ eos_token }}GEN{% endif %}
                {% if tools is defined %}{{ tools | length }} tools: {{ tools[0]['function']['name'] }}{% endif %}
                """;
        ChatTemplate t = new JinjaChatTemplate(src, "<s>", "</s>", List.of());
        String out = t.render(new ChatRequest(CONVERSATION, true,
                List.of(Map.of("type", "function", "function", Map.of("name", "get_weather")))));
        // trim_blocks eats the newline after each block tag, as in Jinja2 with Hugging Face's settings
        assertEquals("[You are a helpful assistant.]\nUSER:true:false:Hello!,ASSISTANT:false:true:Hi,"
                + "USER:false:false:Tell</s>GEN1 tools: get_weather", out);
    }

    @Test
    void jinja_tojson_printsLikePythonJsonDumps() {
        Map<String, Object> fn = new java.util.LinkedHashMap<>();
        fn.put("name", "get_weather");
        fn.put("parameters", Map.of("type", "object"));
        fn.put("required", List.of("city", "Ünit"));
        String src = "{% for t in tools %}{{ t | tojson }}\n{{ t | tojson(indent=2) }}{% endfor %}";
        String out = new JinjaChatTemplate(src, "", "", List.of())
                .render(new ChatRequest(List.of(ChatMessage.user("x")), false, List.of(fn)));
        assertEquals("{\"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}, \"required\": [\"city\", \"Ünit\"]}\n"
                + "{\n  \"name\": \"get_weather\",\n  \"parameters\": {\n    \"type\": \"object\"\n  },\n"
                + "  \"required\": [\n    \"city\",\n    \"Ünit\"\n  ]\n}", out);
    }

    @Test
    void jinja_seesExtraMessageFieldsSuchAsToolCalls() {
        String src = "{% for m in messages %}{% if m.tool_calls is defined %}"
                + "{% for c in m.tool_calls %}call {{ c['function']['name'] }}({{ c['function']['arguments'] }}){% endfor %}"
                + "{% else %}{{ m.role }}: {{ m.content }}{% endif %}{{ '\\n' }}{% endfor %}";
        ChatMessage call = new ChatMessage("assistant", null, Map.of("tool_calls",
                List.of(Map.of("type", "function", "function", Map.of("name", "get_weather", "arguments", "{\"city\":\"Oslo\"}")))));
        String out = new JinjaChatTemplate(src, "", "", List.of())
                .render(new ChatRequest(List.of(ChatMessage.user("Weather?"), call), false));
        assertEquals("user: Weather?\ncall get_weather({\"city\":\"Oslo\"})\n", out);
    }

    @Test
    void jinja_raiseException_becomesChatTemplateExceptionWithTheMessage() {
        String src = "{% for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}"
                + "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
                + "{% endif %}{{ m['content'] }}{% endfor %}";
        ChatTemplate t = new JinjaChatTemplate(src, "", "", List.of());
        assertEquals("ab", t.render(new ChatRequest(List.of(ChatMessage.user("a"), ChatMessage.assistant("b")), false)));
        ChatTemplateException e = assertThrows(ChatTemplateException.class,
                () -> t.render(new ChatRequest(List.of(ChatMessage.assistant("a")), false)));
        assertTrue(e.getMessage().contains("Conversation roles must alternate"), e.getMessage());
    }

    @Test
    void jinja_loopFilter_skipsItemsAndCountsOnlyTheRest() {
        ChatTemplate t = new JinjaChatTemplate("{% for m in messages if m.role != 'system' %}{{ loop.index }}{{ m.role }}"
                + "{% if loop.last %}!{% endif %} {% endfor %}|{%- for m in messages if m['content'].startswith('H') -%}"
                + "{{ m.content }},{%- endfor -%}", "", "", List.of());
        assertEquals("1user 2assistant 3user! |Hello!,Hi there. How can I help?,",
                t.render(new ChatRequest(CONVERSATION, true)));
    }

    @Test
    void jinja_lstripBlocks_stripsOnlyIndentationBeforeTags() {
        String src = "x {% if true %}A{% endif %}\n  {% if true %}B{% endif %}\n\t{# note #}\n  {%+ if true %}C{% endif %}";
        assertEquals("x AB  C", new JinjaChatTemplate(src, "", "", List.of())
                .render(new ChatRequest(CONVERSATION, false)));
    }

    @Test
    void jinja_loopFilterOverSeveralVariables_isRefusedInsteadOfIgnored() {
        ChatTemplate t = new JinjaChatTemplate("{% for k, v in {'a': 1}.items() if v %}{{ k }}{% endfor %}", "", "", List.of());
        ChatTemplateException e = assertThrows(ChatTemplateException.class, () -> t.render(new ChatRequest(CONVERSATION, true)));
        assertTrue(e.getMessage().contains("loop filter"), e.getMessage());
    }

    @Test
    void jinja_syntaxError_isReportedClearly() {
        ChatTemplate t = new JinjaChatTemplate("{% for m in messages %}{{ m.content }", "", "", List.of());
        assertThrows(ChatTemplateException.class, () -> t.render(new ChatRequest(CONVERSATION, true)));
    }
}
