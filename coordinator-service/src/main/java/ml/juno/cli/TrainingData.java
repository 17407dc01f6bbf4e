package ml.juno.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;
import ml.juno.coordinator.tokenizer.ChatMessage;
import ml.juno.coordinator.tokenizer.ChatRequest;
import ml.juno.coordinator.tokenizer.ChatTemplate;
import ml.juno.coordinator.tokenizer.ChatTemplateException;
import ml.juno.coordinator.tokenizer.ChatTemplates;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.lora.LoraTraining.Example;

/**
 * Training data for {@code juno lora train}: a plain text file (tokenized whole, cut into chunks of {@code seqLen}),
 * or a {@code .jsonl} file, one object a line: {@code {"text": …}} (tokenized and chunked on its own, every next token
 * trained) or {@code {"messages": [{"role": …, "content": …}, …]}} (rendered with the model's chat template, only the
 * assistant turns' tokens trained). A line that does not parse, has no text, has no assistant turn or that the
 * template cannot render is named ({@code file:line}) before anything is trained.
 */
final class TrainingData {

    private TrainingData() {}

    /** Every next token of plain text or {@code {"text"}} lines is trained; {@code messages} lines need the template. */
    static List<Example> examples(Path file, Tokenizer tokenizer, Supplier<ChatTemplate> template, int seqLen) throws IOException {
        List<Example> out = new ArrayList<>();
        if (file.getFileName().toString().endsWith(".jsonl")) {
            ObjectMapper mapper = new ObjectMapper();
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            ChatTemplate chat = null;
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.isBlank()) {
                    continue;
                }
                String where = file + ":" + (i + 1) + ": ";
                JsonNode n;
                try {
                    n = mapper.readTree(line);
                } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                    throw new CliException(where + "not a JSON object: " + e.getOriginalMessage());
                }
                if (n.isObject() && n.has("messages")) {
                    if (chat == null) {
                        chat = template.get();
                    }
                    int[][] tm = masked(conversation(n.get("messages"), where), tokenizer, chat, where);
                    cut(tm[0], toMask(tm[1]), seqLen, out);
                    continue;
                }
                if (!n.isObject() || !n.path("text").isTextual() || n.get("text").asText().isEmpty()) {
                    throw new CliException(where + "a line needs a non-empty \"text\" string or a \"messages\" array");
                }
                int[] tokens = tokenizer.encode(n.get("text").asText());
                cut(tokens, allButLast(tokens.length), seqLen, out);
            }
        } else {
            int[] tokens = tokenizer.encode(Files.readString(file, StandardCharsets.UTF_8));
            cut(tokens, allButLast(tokens.length), seqLen, out);
        }
        if (out.isEmpty()) {
            throw new CliException(file + ": no training text (a chunk needs at least 2 tokens and one trained position)");
        }
        return out;
    }

    /** The chunks of one text, every next token trained. */
    static List<Example> text(String text, Tokenizer tokenizer, int seqLen) {
        List<Example> out = new ArrayList<>();
        int[] tokens = tokenizer.encode(text);
        cut(tokens, allButLast(tokens.length), seqLen, out);
        return out;
    }

    /** The chunks of one conversation, its assistant tokens trained; errors start with {@code where}. */
    static List<Example> conversation(List<ChatMessage> msgs, Tokenizer tokenizer, ChatTemplate chat, int seqLen, String where) {
        List<Example> out = new ArrayList<>();
        int[][] tm = masked(msgs, tokenizer, chat, where);
        cut(tm[0], toMask(tm[1]), seqLen, out);
        return out;
    }

    private static List<ChatMessage> conversation(JsonNode arr, String where) {
        if (!arr.isArray() || arr.isEmpty()) {
            throw new CliException(where + "\"messages\" must be a non-empty array of {\"role\", \"content\"} objects");
        }
        List<ChatMessage> msgs = new ArrayList<>();
        boolean assistant = false;
        for (int k = 0; k < arr.size(); k++) {
            JsonNode m = arr.get(k);
            if (!m.isObject() || !m.path("role").isTextual() || !m.path("content").isTextual()) {
                throw new CliException(where + "message " + (k + 1) + " needs a \"role\" string and a \"content\" string");
            }
            String role = m.get("role").asText();
            if (role.equals("assistant")) {
                if (m.get("content").asText().isEmpty()) {
                    throw new CliException(where + "message " + (k + 1) + ": an assistant turn needs content to train on");
                }
                assistant = true;
            }
            msgs.add(new ChatMessage(role, m.get("content").asText()));
        }
        if (!assistant) {
            throw new CliException(where + "no assistant turn to train on (the loss is taken on assistant tokens only)");
        }
        return msgs;
    }

    /**
     * The conversation's tokens as the template renders it whole, and per token 1 where it belongs to an assistant
     * turn (its content and the end-of-turn text the template writes after it). A turn's span is found by rendering
     * the conversation up to it with the generation prompt and through it without: each must be a prefix of the whole
     * rendering, and the token boundaries are where those prefixes' own tokens stop agreeing with the whole's.
     */
    static int[][] masked(List<ChatMessage> msgs, Tokenizer tok, ChatTemplate chat, String where) {
        String full;
        try {
            full = chat.render(new ChatRequest(msgs, false));
        } catch (ChatTemplateException e) {
            throw new CliException(where + "the model's chat template (" + chat.name() + ") cannot render this conversation: "
                    + e.getMessage());
        }
        int[] ids = ChatTemplates.encodePrompt(tok, full);
        int[] assistant = new int[ids.length];
        for (int i = 0; i < msgs.size(); i++) {
            if (!msgs.get(i).role().equals("assistant")) {
                continue;
            }
            String before;
            String through;
            try {
                before = chat.render(new ChatRequest(msgs.subList(0, i), true));
                through = chat.render(new ChatRequest(msgs.subList(0, i + 1), false));
            } catch (ChatTemplateException e) {
                throw new CliException(where + "the model's chat template (" + chat.name() + ") cannot render the conversation up to"
                        + " message " + (i + 1) + ": " + e.getMessage());
            }
            if (!through.startsWith(before) || !full.startsWith(through)) {
                throw new CliException(where + "the model's chat template (" + chat.name() + ") renders message " + (i + 1)
                        + " differently once later turns follow, so its assistant tokens cannot be told apart");
            }
            int from = commonPrefix(ChatTemplates.encodePrompt(tok, before), ids);
            int to = commonPrefix(ChatTemplates.encodePrompt(tok, through), ids);
            for (int j = from; j < to; j++) {
                assistant[j] = 1;
            }
        }
        return new int[][] {ids, assistant};
    }

    private static int commonPrefix(int[] a, int[] b) {
        int n = Math.min(a.length, b.length);
        int i = 0;
        while (i < n && a[i] == b[i]) {
            i++;
        }
        return i;
    }

    /** The training mask of a sequence whose tokens flagged in {@code assistant} are the targets: position i predicts i+1. */
    private static boolean[] toMask(int[] assistant) {
        boolean[] m = new boolean[assistant.length];
        for (int i = 0; i + 1 < assistant.length; i++) {
            m[i] = assistant[i + 1] != 0;
        }
        return m;
    }

    private static boolean[] allButLast(int n) {
        boolean[] m = new boolean[n];
        Arrays.fill(m, 0, Math.max(0, n - 1), true);
        return m;
    }

    /** Chunks of {@code seqLen} tokens; a chunk keeps its mask (its last position has no next token) and needs one target. */
    private static void cut(int[] tokens, boolean[] mask, int seqLen, List<Example> out) {
        for (int from = 0; from < tokens.length; from += seqLen) {
            int to = Math.min(tokens.length, from + seqLen);
            if (to - from < 2) {
                continue;
            }
            boolean[] m = Arrays.copyOfRange(mask, from, to);
            m[m.length - 1] = false;
            boolean any = false;
            for (boolean b : m) {
                any |= b;
            }
            if (any) {
                out.add(new Example(Arrays.copyOfRange(tokens, from, to), m));
            }
        }
    }
}
