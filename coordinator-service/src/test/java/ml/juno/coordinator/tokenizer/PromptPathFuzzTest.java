package ml.juno.coordinator.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import ml.juno.engine.gguf.GgufFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Seeded mutation fuzzing of the prompt path a request takes: chat messages with hostile content (template syntax,
 * special-token text, lone surrogates, control characters, huge repeats) rendered by a model's own Jinja template and a
 * built-in one, then tokenized with special-token parsing on and off, then detokenized. Every input either works or is
 * refused with the documented exceptions ({@link ChatTemplateException}, {@link IllegalArgumentException}); never
 * another exception, an error or a hang; byte-level BPE text without surrogates round-trips exactly.
 * {@code -Djuno.fuzz.iterations=N} (default 1500) and {@code -Djuno.fuzz.seed=S}; a failure prints both.
 */
class PromptPathFuzzTest {

    private static final int ITERATIONS = Integer.getInteger("juno.fuzz.iterations", 1500);
    private static final long SEED = Long.getLong("juno.fuzz.seed", 0x70726f6dL);

    private static final String[] PIECES = {"Hello", " world", "{{", "}}", "{%", "%}", "{#", "#}", "{{ raise_exception('x') }}",
            "{% for m in messages %}", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<|user|>", "<|end|>", "<|assistant|>", "[INST]",
            "\u0000", "\u001b[31m", "\r\n", "\t", "\uD800", "\uDC00", "\uD83E\uDD99", "é", "e\u0301", "数字", "\u200B", "\uFEFF", " ", "'", "\"",
            "\\", "\\u0000", "%", "$", "__class__", "range(1000000000)", "loop.index", "<", ">", "&", "\u202E"};
    private static final String[] ROLES = {"system", "user", "assistant", "tool", "developer", "", "USER", "{{ 7*7 }}"};

    private static String text(SplittableRandom rnd) {
        StringBuilder sb = new StringBuilder();
        int parts = rnd.nextInt(12);
        for (int i = 0; i < parts; i++) {
            switch (rnd.nextInt(6)) {
                case 0 -> sb.appendCodePoint(rnd.nextInt(0x110000) & (rnd.nextBoolean() ? 0x7f : 0x10ffff));
                case 1 -> sb.append(PIECES[rnd.nextInt(PIECES.length)].repeat(1 + rnd.nextInt(rnd.nextInt(50) == 0 ? 2000 : 3)));
                default -> sb.append(PIECES[rnd.nextInt(PIECES.length)]);
            }
        }
        return sb.toString();
    }

    @Test
    @Timeout(300)
    void hostileMessages_renderTokenizeAndDetokenize_orAreRefusedCleanly() throws IOException {
        List<Tokenizer> tokenizers = new ArrayList<>();
        List<ChatTemplate> templates = new ArrayList<>();
        for (String vocab : List.of("ggml-vocab-phi-3.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-llama-spm.gguf")) {
            Tokenizer tok = TestModels.tokenizer(vocab);
            tokenizers.add(tok);
            try (GgufFile f = GgufFile.open(TestModels.find(vocab))) {
                templates.add(ChatTemplates.forModel(f.metadata(), tok));
            }
        }
        templates.add(BuiltinChatTemplate.CHATML.bind("<s>", "</s>"));
        SplittableRandom rnd = new SplittableRandom(SEED);
        int rendered = 0;
        int refused = 0;
        for (int it = 0; it < ITERATIONS; it++) {
            int which = rnd.nextInt(templates.size());
            ChatTemplate template = templates.get(which);
            Tokenizer tok = tokenizers.get(Math.min(which, tokenizers.size() - 1));
            List<ChatMessage> messages = new ArrayList<>();
            int n = rnd.nextInt(5);
            for (int i = 0; i < n; i++) {
                messages.add(new ChatMessage(ROLES[rnd.nextInt(ROLES.length)], text(rnd)));
            }
            String raw = text(rnd);
            try {
                String prompt;
                try {
                    prompt = template.render(new ChatRequest(messages, rnd.nextBoolean()));
                    rendered++;
                } catch (ChatTemplateException | IllegalArgumentException e) {
                    refused++;
                    prompt = raw;
                }
                int[] ids = tok.encode(prompt, rnd.nextBoolean(), rnd.nextBoolean());
                for (int id : ids) {
                    assertTrue(id >= 0 && id < tok.size(), "token id " + id);
                }
                String back = tok.decode(ids);
                if (which == 1 && !raw.chars().anyMatch(c -> Character.isSurrogate((char) c))) {
                    assertEquals(raw, tok.decode(tok.encode(raw, false, false)), "byte-level BPE round trip");
                }
                assertTrue(back != null);
                ChatTemplates.encodePrompt(tok, prompt);
            } catch (AssertionError | RuntimeException | StackOverflowError | OutOfMemoryError e) {
                fail("seed " + SEED + " iteration " + it + " (template " + which + "): " + e, e);
            }
        }
        assertTrue(rendered > ITERATIONS / 4, "most inputs should render: " + rendered);
        System.out.println("prompt-path fuzz: " + ITERATIONS + " inputs, " + rendered + " rendered, " + refused + " refused cleanly");
    }
}
