package ml.juno.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import ml.juno.coordinator.tokenizer.ChatMessage;
import ml.juno.coordinator.tokenizer.ChatRequest;
import ml.juno.coordinator.tokenizer.ChatTemplate;
import ml.juno.coordinator.tokenizer.ChatTemplates;
import ml.juno.coordinator.tokenizer.Tokenizer;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.lora.BaseFingerprint;
import ml.juno.engine.lora.LoraAdapter;
import ml.juno.engine.lora.LoraFile;
import ml.juno.engine.lora.LoraPlan;
import ml.juno.engine.lora.LoraTrainer;
import ml.juno.engine.lora.LoraTraining;
import ml.juno.engine.lora.LoraTraining.Example;
import ml.juno.engine.model.InferenceSession;
import ml.juno.engine.model.Logits;
import ml.juno.engine.model.Model;
import ml.juno.engine.model.block.Projection;
import ml.juno.engine.step.StepBatch;

/**
 * The interactive trainer of {@code juno lora -m M}: {@code /train TEXT}, {@code /train-file PATH} and
 * {@code /train-qa QUESTION | ANSWER} each run a few optimizer steps on their sequences (the adapter, trained in
 * place, is what the model plays at once), {@code /status}, {@code /save [PATH]}, {@code /reset}, {@code /help},
 * {@code /exit}; any other line is a chat turn answered greedily by the model as adapted so far.
 */
final class LoraRepl {

    /** What the session trains and how it answers. */
    record Settings(List<Projection> targets, int rank, float alpha, boolean rsLora, float lr, int steps, int seqLen, long seed,
                    int maxTokens, Path output) {}

    static final String HELP = """
            Commands (each /train… runs the session's optimizer steps on its sequences; the model plays the adapter at once):
              /train TEXT                  train on TEXT (every next token)
              /train-file PATH             train on a file: plain text, or .jsonl {"text"} / {"messages"} lines
              /train-qa QUESTION | ANSWER  train the answer to the question, in a few phrasings, in the model's chat template
              /status                      the adapter, what it was trained on, the conversation
              /save [PATH]                 write the adapter (.lora; default the --output file)
              /reset                       a fresh adapter (and optimizer state) and a new conversation
              /help                        this text
              /exit                        leave (also Ctrl-D)
            Any other line chats with the model as adapted so far (greedy).""";

    /** The phrasings {@code /train-qa} trains a question in; {@code %s} is the question. */
    static final List<String> PHRASINGS = List.of("%s", "Question: %s", "Please answer this: %s");

    private final GgufFile base;
    private final Tokenizer tok;
    private final ChatTemplate chat;
    private final LoraTrainer trainer;
    private final Model model;
    private final Settings s;
    private final PrintWriter out;
    private final List<ChatMessage> history = new ArrayList<>();

    private LoraAdapter adapter;
    private LoraTraining.AdamState adam; // carried from command to command
    private int stepsDone;
    private int sequences;
    private int commands;
    private double lastLoss = Double.NaN;
    private boolean unsaved;

    LoraRepl(GgufFile base, Tokenizer tok, ChatTemplate chat, LoraTrainer trainer, Model model, Settings s, PrintWriter out) {
        this.base = base;
        this.tok = tok;
        this.chat = chat;
        this.trainer = trainer;
        this.model = model;
        this.s = s;
        this.out = out;
        fresh();
    }

    private void fresh() {
        adapter = LoraTrainer.init(BaseFingerprint.of(base), s.targets(), s.rank(), s.alpha(), s.rsLora(), s.seed(),
                java.util.Map.of("lr", Float.toString(s.lr()), "steps-per-command", Integer.toString(s.steps()), "seed",
                        Long.toString(s.seed()), "trainer", "juno lora (interactive)"));
        adam = LoraTraining.AdamState.fresh(adapter);
        LoraPlan.apply(model, List.of(new LoraPlan.Played(adapter, 1f, 0))); // the arrays trained in place are played
        stepsDone = 0;
        sequences = 0;
        commands = 0;
        lastLoss = Double.NaN;
        unsaved = false;
        history.clear();
    }

    int run(TerminalChat.Lines lines) {
        out.println("Interactive LoRA trainer on " + base.metadata().getString(ml.juno.engine.gguf.GgufKeys.GENERAL_NAME, "the model")
                + " (targets " + names(s.targets()) + ", rank " + s.rank() + "; '/help' for commands, '/exit' to leave).");
        out.flush();
        while (true) {
            String line = lines.read("lora> ");
            if (line == null) {
                out.println();
                out.flush();
                return 0;
            }
            line = line.strip();
            if (line.isEmpty()) {
                continue;
            }
            String cmd = line.split("\\s+", 2)[0];
            String arg = line.length() > cmd.length() ? line.substring(cmd.length()).strip() : "";
            try {
                switch (cmd) {
                    case "/exit", "/quit" -> {
                        if (unsaved) {
                            out.println("(the adapter had unsaved training; /save writes it)");
                        }
                        out.flush();
                        return 0;
                    }
                    case "/train" -> {
                        need(arg, "/train TEXT");
                        train(TrainingData.text(arg, tok, s.seqLen()), "the text");
                    }
                    case "/train-file" -> {
                        need(arg, "/train-file PATH");
                        Path p = Path.of(arg);
                        if (!Files.isRegularFile(p)) {
                            throw new CliException("file not found: " + p);
                        }
                        train(TrainingData.examples(p, tok, () -> chat, s.seqLen()), p.getFileName().toString());
                    }
                    case "/train-qa" -> {
                        int bar = arg.indexOf('|');
                        if (bar < 0 || arg.substring(0, bar).isBlank() || arg.substring(bar + 1).isBlank()) {
                            throw new CliException("usage: /train-qa QUESTION | ANSWER");
                        }
                        String q = arg.substring(0, bar).strip();
                        String a = arg.substring(bar + 1).strip();
                        List<Example> ex = new ArrayList<>();
                        for (String ph : PHRASINGS) {
                            ex.addAll(TrainingData.conversation(List.of(ChatMessage.user(String.format(Locale.ROOT, ph, q)),
                                    ChatMessage.assistant(a)), tok, chat, s.seqLen(), "/train-qa: "));
                        }
                        train(ex, "the question in " + PHRASINGS.size() + " phrasings");
                    }
                    case "/status" -> out.println(status());
                    case "/save" -> {
                        Path p = arg.isEmpty() ? s.output() : Path.of(arg);
                        LoraFile.write(p, adapter);
                        unsaved = false;
                        out.println("wrote " + p + " (" + stepsDone + " steps)");
                    }
                    case "/reset" -> {
                        fresh();
                        out.println("(a fresh adapter; conversation forgotten)");
                    }
                    case "/help" -> out.println(HELP);
                    default -> {
                        if (line.startsWith("/")) {
                            out.println("unknown command " + cmd + "; '/help' lists them");
                        } else {
                            answer(line);
                        }
                    }
                }
            } catch (CliException | IllegalArgumentException | IOException e) {
                out.println("error: " + e.getMessage());
            }
            out.flush();
        }
    }

    private static String names(List<Projection> ts) {
        return String.join(",", ts.stream().map(t -> t.shortName).toList());
    }

    private static void need(String arg, String usage) {
        if (arg.isEmpty()) {
            throw new CliException("usage: " + usage);
        }
    }

    private void train(List<Example> ex, String what) throws IOException {
        if (ex.isEmpty()) {
            throw new CliException("nothing to train in " + what + " (a sequence needs at least 2 tokens)");
        }
        double before = LoraTraining.evaluate(trainer, adapter, ex);
        long t0 = System.nanoTime();
        var o = new LoraTraining.Options(s.lr(), 0f, 0, s.steps(), 1f, s.seed() + commands);
        new LoraTraining.Run(trainer, adapter, ex, List.of(), o, adam).train(null, 0, null);
        double after = LoraTraining.evaluate(trainer, adapter, ex);
        commands++;
        stepsDone += s.steps();
        sequences += ex.size();
        lastLoss = after;
        unsaved = true;
        out.printf(Locale.ROOT, "trained %d steps on %s (%d sequence%s): loss %.4f -> %.4f in %.1f s%n", s.steps(), what, ex.size(),
                ex.size() == 1 ? "" : "s", before, after, (System.nanoTime() - t0) / 1e9);
    }

    String status() {
        return String.format(Locale.ROOT, "adapter: targets %s, rank %d, alpha %s%s; trained %d steps in %d command%s on %d sequences%s;"
                        + " conversation: %d messages; %s", names(s.targets()), s.rank(), s.alpha(), s.rsLora() ? " (rsLoRA)" : "",
                stepsDone, commands, commands == 1 ? "" : "s", sequences,
                Double.isNaN(lastLoss) ? "" : String.format(Locale.ROOT, ", last loss %.4f", lastLoss), history.size(),
                unsaved ? "unsaved (/save)" : "nothing unsaved");
    }

    /** Greedy answer of the conversation so far plus {@code text}, with the adapter as it is now. */
    private void answer(String text) {
        history.add(ChatMessage.user(text));
        int[] prompt = ChatTemplates.encodePrompt(tok, chat.render(new ChatRequest(history, true)));
        int ctx = model.contextLength();
        if (prompt.length + 1 > ctx) {
            history.remove(history.size() - 1);
            throw new CliException("the conversation (" + prompt.length + " tokens) exceeds the context of " + ctx + "; /reset starts anew");
        }
        StringBuilder reply = new StringBuilder();
        var detok = tok.streamingDetokenizer(false);
        try (InferenceSession session = model.newSession()) {
            int max = session.maxBatch();
            StepBatch.Builder b = new StepBatch.Builder(max);
            Logits logits = null;
            for (int from = 0; from < prompt.length; from += max) {
                int to = Math.min(prompt.length, from + max);
                b.clear();
                b.addPrompt(0, from, prompt, from, to, to == prompt.length);
                logits = session.forward(b.build());
            }
            int pos = prompt.length;
            for (int n = 0; n < s.maxTokens() && pos < ctx; n++) {
                int next = logits.argmax(0);
                if (tok.isEndOfGeneration(next)) {
                    break;
                }
                String piece = detok.decode(next);
                reply.append(piece);
                if (stopped(reply)) {
                    break;
                }
                b.clear();
                b.add(0, pos++, next, true);
                logits = session.forward(b.build());
            }
        }
        reply.append(detok.flush());
        String answer = reply.toString();
        for (String stop : chat.stopStrings()) {
            int at = stop.isEmpty() ? -1 : answer.indexOf(stop);
            if (at >= 0) {
                answer = answer.substring(0, at);
            }
        }
        answer = answer.strip();
        out.println(answer);
        history.add(ChatMessage.assistant(answer));
    }

    private boolean stopped(StringBuilder reply) {
        for (String stop : chat.stopStrings()) {
            if (!stop.isEmpty() && reply.indexOf(stop) >= 0) {
                return true;
            }
        }
        return false;
    }
}
