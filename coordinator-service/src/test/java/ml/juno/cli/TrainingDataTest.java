package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import ml.juno.coordinator.tokenizer.ChatTemplate;
import ml.juno.coordinator.tokenizer.ChatTemplates;
import ml.juno.coordinator.tokenizer.JinjaChatTemplate;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufKeys;
import ml.juno.engine.kernel.cpu.CpuBackend;
import ml.juno.engine.lora.LoraAdapter;
import ml.juno.engine.lora.LoraPair;
import ml.juno.engine.lora.LoraTrainer;
import ml.juno.engine.lora.LoraTraining.Example;
import ml.juno.engine.model.Architectures;
import ml.juno.engine.model.block.Projection;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code {"messages"}} lines: rendered with the model's chat template, only assistant tokens trained (the built-in
 * llama2 format of stories260K and a Jinja ChatML template), masked positions adding nothing to the loss or its
 * gradient, and bad lines named by file and line.
 */
class TrainingDataTest {
    static final String CHATML = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
            + "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";

    static GgufFile model;
    static Tokenizer tok;
    static Supplier<ChatTemplate> builtin;

    @TempDir
    Path dir;

    @BeforeAll
    static void open() throws Exception {
        model = GgufFile.open(Path.of(LoraCommandsTest.STORIES));
        tok = Tokenizer.fromGguf(model);
        builtin = () -> ChatTemplates.forModel(model.metadata(), tok);
    }

    @org.junit.jupiter.api.AfterAll
    static void close() throws Exception {
        model.close();
    }

    private List<Example> read(String jsonl, Supplier<ChatTemplate> t, int seqLen) throws Exception {
        Path f = dir.resolve("d.jsonl");
        Files.writeString(f, jsonl);
        return TrainingData.examples(f, tok, t, seqLen);
    }

    /** The text of the trained target tokens of an example, one string per run of consecutive targets. */
    private static List<String> targets(Example e) {
        List<String> runs = new ArrayList<>();
        List<Integer> cur = new ArrayList<>();
        for (int i = 0; i < e.tokens().length - 1; i++) {
            if (e.mask()[i]) {
                cur.add(e.tokens()[i + 1]);
            } else if (!cur.isEmpty()) {
                runs.add(tok.decode(cur.stream().mapToInt(Integer::intValue).toArray(), true));
                cur.clear();
            }
        }
        if (!cur.isEmpty()) {
            runs.add(tok.decode(cur.stream().mapToInt(Integer::intValue).toArray(), true));
        }
        return runs;
    }

    private static final String CONVERSATION = "{\"messages\": [{\"role\": \"system\", \"content\": \"Be kind.\"},"
            + " {\"role\": \"user\", \"content\": \"Who is Tim?\"}, {\"role\": \"assistant\", \"content\": \"Tim is a dog.\"},"
            + " {\"role\": \"user\", \"content\": \"And Sue?\"}, {\"role\": \"assistant\", \"content\": \"Sue is a cat.\"}]}\n";

    @Test
    void messages_trainOnlyTheAssistantTurnsAndTheirEnd_inTheBuiltinTemplate() throws Exception {
        List<Example> ex = read(CONVERSATION, builtin, 256);
        assertEquals(1, ex.size());
        Example e = ex.get(0);
        String whole = tok.decode(e.tokens(), true);
        assertTrue(whole.contains("[INST]") && whole.contains("Who is Tim?") && whole.contains("Be kind."), whole);
        List<String> runs = targets(e);
        assertEquals(2, runs.size(), runs.toString());
        assertEquals("Tim is a dog. </s>", runs.get(0).strip());
        assertEquals("Sue is a cat. </s>", runs.get(1).strip());
    }

    @Test
    void messages_inAJinjaTemplate_trainTheAssistantContentAndItsEndOfTurn() throws Exception {
        Supplier<ChatTemplate> chatml = () -> new JinjaChatTemplate(CHATML, "<s>", "</s>", List.of("<|im_end|>"));
        List<String> runs = targets(read(CONVERSATION, chatml, 256).get(0));
        assertEquals(List.of("Tim is a dog.<|im_end|>\n", "Sue is a cat.<|im_end|>\n"), runs.stream()
                .map(s -> s.startsWith(" ") ? s.substring(1) : s).toList());
    }

    @Test
    void maskedPositions_addNothingToTheLossOrItsGradient() throws Exception {
        // the same conversation with a different last user turn: it follows every assistant token, so with the mask
        // its tokens are neither trained nor context of a trained one
        String other = CONVERSATION.replace("]}\n", ", {\"role\": \"user\", \"content\": \"Thanks, bye!\"}]}\n");
        String other2 = CONVERSATION.replace("]}\n", ", {\"role\": \"user\", \"content\": \"What about the big red ball?\"}]}\n");
        Example a = read(other, builtin, 256).get(0);
        Example b = read(other2, builtin, 256).get(0);
        assertNotEquals(a.tokens().length, b.tokens().length);
        try (CpuBackend backend = new CpuBackend(1)) {
            var config = Architectures.forName(model.metadata().getString(GgufKeys.GENERAL_ARCHITECTURE)).config(model);
            LoraTrainer trainer = new LoraTrainer(model, config, backend);
            LoraAdapter adapter = LoraCommandsTest.adapter(LoraCommandsTest.STORIES, 4, 0.05f);
            LoraTrainer.Gradients ga = LoraTrainer.gradients(adapter);
            LoraTrainer.Gradients gb = LoraTrainer.gradients(adapter);
            double la = trainer.run(adapter, a.tokens(), a.mask(), ga, 1f);
            double lb = trainer.run(adapter, b.tokens(), b.mask(), gb, 1f);
            assertEquals(la, lb, "the loss ignores the untrained user turn");
            for (LoraPair p : adapter.pairs()) {
                assertArrayEquals(ga.a(p), gb.a(p), "gradient of A, " + p.layer() + " " + p.target());
                assertArrayEquals(ga.b(p), gb.b(p), "gradient of B, " + p.layer() + " " + p.target());
            }
            double fullA = trainer.run(adapter, a.tokens(), Example.text(a.tokens()).mask(), null, 1f);
            double fullB = trainer.run(adapter, b.tokens(), Example.text(b.tokens()).mask(), null, 1f);
            assertNotEquals(fullA, fullB, "without the mask the user turn would count");
        }
    }

    @Test
    void longConversations_areChunked_keepingTheirMasks() throws Exception {
        List<Example> ex = read(CONVERSATION, builtin, 12);
        assertTrue(ex.size() > 1, "cut to 12 tokens");
        int targets = 0;
        for (Example e : ex) {
            assertTrue(e.tokens().length <= 12);
            assertFalse(e.mask()[e.tokens().length - 1], "the last position of a chunk has no next token");
            for (boolean m : e.mask()) {
                targets += m ? 1 : 0;
            }
        }
        Example whole = read(CONVERSATION, builtin, 256).get(0);
        int all = 0;
        for (boolean m : whole.mask()) {
            all += m ? 1 : 0;
        }
        assertTrue(targets > 0 && targets <= all, targets + " of " + all);
    }

    @Test
    void badLines_areNamedByFileAndLine() throws Exception {
        String ok = "{\"text\": \"Once upon a time\"}\n";
        for (String[] c : new String[][] {
                {"{\"messages\": \"hello\"}", "non-empty array"},
                {"{\"messages\": []}", "non-empty array"},
                {"{\"messages\": [{\"role\": \"user\"}]}", "message 1 needs a \"role\" string and a \"content\" string"},
                {"{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}", "no assistant turn"},
                {"{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}, {\"role\": \"assistant\", \"content\": \"\"}]}", "needs content"},
                {"{\"messages\": [{\"role\": \"tool\", \"content\": \"x\"}, {\"role\": \"assistant\", \"content\": \"y\"}]}",
                        "cannot render"},
                {"{\"messages\": [{\"role\": \"user\", \"content\": [1]}]}", "\"content\" string"}}) {
            CliException e = assertThrows(CliException.class, () -> read(ok + c[0] + "\n", builtin, 256), c[0]);
            assertTrue(e.getMessage().contains("d.jsonl:2: ") && e.getMessage().contains(c[1]), e.getMessage());
        }
    }
}
