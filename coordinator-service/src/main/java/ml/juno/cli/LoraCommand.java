package ml.juno.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.lora.GgufLora;
import ml.juno.engine.lora.LoraAdapter;
import ml.juno.engine.lora.LoraAdapters;
import ml.juno.engine.lora.LoraFile;
import ml.juno.engine.lora.LoraTraining;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code juno lora}: the interactive trainer (no subcommand, {@link LoraRepl}), {@code train}, and trading adapters
 * with llama.cpp ({@code export}, {@code import}).
 */
@Command(name = "lora", mixinStandardHelpOptions = true,
        description = {"LoRA adapters: train them (interactively, or 'lora train' on a data file), export to / import from llama.cpp's GGUF LoRA format.",
                "Without a subcommand: the interactive trainer on --model-path (llama, qwen2, qwen3, phi3, gemma3; qwen3moe with the",
                "attention targets q,k,v,o only). /train TEXT, /train-file PATH, /train-qa QUESTION | ANSWER each run --steps optimizer",
                "steps on their sequences; /status, /save [PATH], /reset, /help, /exit; any other line chats with the model as adapted",
                "so far (greedy, up to --max-tokens).",
                "Play adapters with --lora-play on local, cluster, generate and bench; merge them with 'juno merge'."},
        subcommands = {LoraCommand.Export.class, LoraCommand.Import.class, LoraCommand.Train.class})
final class LoraCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOption model = new ModelOption();

    @Mixin
    AdapterShapeOptions shape = new AdapterShapeOptions();

    @picocli.CommandLine.Option(names = "--lr", defaultValue = "2e-3", description = "Learning rate of each /train... command (AdamW, its moments carried from command to command; cosine over the command's steps; default: ${DEFAULT-VALUE}).")
    float lr;

    @picocli.CommandLine.Option(names = "--steps", defaultValue = "30", description = "Optimizer steps each /train... command runs (default: ${DEFAULT-VALUE}).")
    int steps;

    @picocli.CommandLine.Option(names = "--seq-len", defaultValue = "256", description = "Tokens per training chunk (default: ${DEFAULT-VALUE}).")
    int seqLen;

    @picocli.CommandLine.Option(names = "--seed", defaultValue = "0", description = "Seed of the initialization and the order (default: ${DEFAULT-VALUE}).")
    long seed;

    @picocli.CommandLine.Option(names = "--max-tokens", defaultValue = "64", description = "Tokens a chat answer may have (default: ${DEFAULT-VALUE}).")
    int maxTokens;

    @picocli.CommandLine.Option(names = "--output", defaultValue = "adapter.lora", paramLabel = "A.lora", description = "Where /save writes without a path (default: ${DEFAULT-VALUE}).")
    Path output;

    @Override
    public Integer call() throws IOException {
        try (TerminalChat.Lines lines = TerminalChat.systemLines(Path.of(System.getProperty("user.home"), ".juno_history"))) {
            return interactive(lines);
        }
    }

    /** The interactive trainer on {@code lines} (the tests give their own). */
    int interactive(TerminalChat.Lines lines) throws IOException {
        if (shape.rank < 1 || seqLen < 2 || steps < 1 || maxTokens < 1 || !(lr > 0)) {
            throw new CliException("--rank >= 1, --seq-len >= 2, --steps >= 1, --max-tokens >= 1 and --lr > 0 are required");
        }
        java.util.List<ml.juno.engine.model.block.Projection> ts = shape.projections();
        try (GgufFile base = GgufFile.open(model.resolve());
             ml.juno.engine.kernel.Backend backend = ml.juno.engine.kernel.Backends.select(1)) {
            var config = ml.juno.engine.model.Architectures.forName(base.metadata().getString(
                    ml.juno.engine.gguf.GgufKeys.GENERAL_ARCHITECTURE)).config(base);
            ml.juno.engine.lora.LoraTrainer trainer;
            try {
                trainer = new ml.juno.engine.lora.LoraTrainer(base, config, backend);
                trainer.requireTrainable(ts);
            } catch (IllegalArgumentException e) {
                throw new CliException(e.getMessage());
            }
            var tokenizer = ml.juno.coordinator.tokenizer.Tokenizer.fromGguf(base);
            var chat = ml.juno.coordinator.tokenizer.ChatTemplates.forModel(base.metadata(), tokenizer);
            try (ml.juno.engine.model.Model m = ml.juno.engine.model.Model.load(base,
                    new ml.juno.engine.model.EngineOptions(1, 0, ml.juno.engine.kv.KvType.F32, 128, 1),
                    ml.juno.engine.kernel.Backends::select)) {
                PrintWriter out = spec.commandLine().getOut();
                return new LoraRepl(base, tokenizer, chat, trainer, m, new LoraRepl.Settings(ts, shape.rank, shape.alpha, shape.rsLora, lr, steps, seqLen, seed,
                        maxTokens, output), out).run(lines);
            }
        }
    }

    /** {@code juno lora export A.lora OUT.gguf}. */
    @Command(name = "export", mixinStandardHelpOptions = true,
            description = "Write a Juno .lora adapter as a llama.cpp GGUF LoRA (F32; fused phi3 tensors joined), for llama.cpp's --lora.")
    static final class Export implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Parameters(index = "0", paramLabel = "A.lora")
        Path in;

        @Parameters(index = "1", paramLabel = "OUT.gguf")
        Path out;

        @Override
        public Integer call() throws IOException {
            if (!Files.isRegularFile(in)) {
                throw new CliException("adapter file not found: " + in);
            }
            LoraAdapter a;
            try {
                a = LoraFile.read(in);
            } catch (IOException e) {
                throw new CliException(e.getMessage());
            }
            GgufLora.write(out, a);
            PrintWriter w = spec.commandLine().getOut();
            w.printf("wrote %s: %d LoRA pairs for %s%n", out, a.pairs().size(), a.header().base().describe());
            w.flush();
            return 0;
        }
    }

    /** {@code juno lora import IN.gguf OUT.lora --model-path M}. */
    @Command(name = "import", mixinStandardHelpOptions = true,
            description = "Read a llama.cpp GGUF LoRA into a Juno .lora file; the base model (--model-path) is checked and recorded in its header.")
    static final class Import implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ModelOption model = new ModelOption();

        @Parameters(index = "0", paramLabel = "IN.gguf")
        Path in;

        @Parameters(index = "1", paramLabel = "OUT.lora")
        Path out;

        @Override
        public Integer call() throws IOException {
            if (!Files.isRegularFile(in)) {
                throw new CliException("adapter file not found: " + in);
            }
            LoraAdapter a;
            try (GgufFile base = GgufFile.open(model.resolve())) {
                if (!GgufLora.isGguf(in)) {
                    throw new CliException(in + " is not a GGUF file");
                }
                a = LoraAdapters.load(in, base);
            } catch (IOException e) {
                throw new CliException(e.getMessage());
            }
            LoraFile.write(out, a);
            PrintWriter w = spec.commandLine().getOut();
            w.printf("wrote %s: %d LoRA pairs, rank %d, alpha %s%n", out, a.pairs().size(), a.header().rank(), a.header().alpha());
            w.flush();
            return 0;
        }
    }

    /** {@code juno lora train}: the trainer. */
    @Command(name = "train", mixinStandardHelpOptions = true,
            description = {"Train a LoRA adapter on plain text or JSONL lines. Every dense architecture Juno runs trains (llama, qwen2,",
                    "qwen3, phi3 with its fused tensors sliced per target, gemma3); qwen3moe trains the attention targets q,k,v,o only",
                    "(its FFN is a mixture of experts: gate, up and down are refused).",
                    "{\"text\": ...} trains every next token; {\"messages\": [{\"role\", \"content\"}, ...]} is rendered with the",
                    "model's chat template and trains the assistant turns' tokens only (their content and end of turn).",
                    "Single-threaded and deterministic: the same data, options and --seed give the same adapter bit for bit,",
                    "also when stopped and continued with --resume from a --checkpoint-every checkpoint.",
                    "With --val-split > 0 the validation loss is taken at the end of each epoch and at the last step, and the",
                    "adapter of the lowest one is written (not necessarily the last). Each step is a JFR juno.LoraTrainStep event."})
    static final class Train implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ModelOption model = new ModelOption();

        @picocli.CommandLine.Option(names = "--data", required = true, paramLabel = "FILE", description = "Plain text, or .jsonl with one {\"text\": ...} or {\"messages\": [...]} object a line; a bad line is named (file:line) before training.")
        Path data;

        @picocli.CommandLine.Option(names = "--output", required = true, paramLabel = "A.lora", description = "Adapter to write (temporary file, then renamed).")
        Path output;

        @Mixin
        AdapterShapeOptions shape = new AdapterShapeOptions();

        @picocli.CommandLine.Option(names = "--dropout", defaultValue = "0", description = "LoRA dropout on the adapters' inputs while training, seeded; none at validation (default: ${DEFAULT-VALUE}).")
        float dropout;

        @picocli.CommandLine.Option(names = "--lr", defaultValue = "2e-4", description = "Peak learning rate (AdamW; default: ${DEFAULT-VALUE}).")
        float lr;

        @picocli.CommandLine.Option(names = "--weight-decay", defaultValue = "0", description = "AdamW decoupled weight decay (default: ${DEFAULT-VALUE}).")
        float weightDecay;

        @picocli.CommandLine.Option(names = "--warmup", defaultValue = "10", description = "Linear warm-up steps, then cosine decay (default: ${DEFAULT-VALUE}).")
        int warmup;

        @picocli.CommandLine.Option(names = "--clip", defaultValue = "1", description = "Largest global gradient norm; 0 = no clipping (default: ${DEFAULT-VALUE}).")
        float clip;

        @picocli.CommandLine.Option(names = "--epochs", defaultValue = "1", description = "Passes over the training chunks when --max-steps is not given (default: ${DEFAULT-VALUE}).")
        int epochs;

        @picocli.CommandLine.Option(names = "--max-steps", defaultValue = "0", description = "Optimizer steps; 0 = --epochs passes.")
        int maxSteps;

        @picocli.CommandLine.Option(names = "--batch-tokens", defaultValue = "0", paramLabel = "N", description = "Gradient accumulation: each step averages the gradients of as many chunks as fit in N tokens (at least one); 0 = one chunk a step (default: ${DEFAULT-VALUE}).")
        int batchTokens;

        @picocli.CommandLine.Option(names = "--seq-len", defaultValue = "256", description = "Tokens per training chunk (default: ${DEFAULT-VALUE}).")
        int seqLen;

        @picocli.CommandLine.Option(names = "--val-split", defaultValue = "0.1", description = "Fraction of chunks held out for the validation loss; the adapter of the lowest one is written (default: ${DEFAULT-VALUE}).")
        double valSplit;

        @picocli.CommandLine.Option(names = "--seed", defaultValue = "0", description = "Seed of the initialization, the chunk order and the dropout (default: ${DEFAULT-VALUE}).")
        long seed;

        @picocli.CommandLine.Option(names = "--checkpoint-every", defaultValue = "0", paramLabel = "N", description = "Every N steps write A.lora.ckpt beside the output (adapter, optimizer state, step; atomically); 0 = never (default: ${DEFAULT-VALUE}).")
        int checkpointEvery;

        @picocli.CommandLine.Option(names = "--resume", paramLabel = "FILE", description = "Go on from a checkpoint (A.lora.ckpt, or A.lora whose A.lora.ckpt lies beside it), given the same data and options: the result equals an uninterrupted run.")
        Path resume;

        @Override
        public Integer call() throws IOException {
            if (shape.rank < 1 || seqLen < 2 || epochs < 1 || maxSteps < 0 || !(valSplit >= 0 && valSplit < 1) || !(dropout >= 0 && dropout < 1)
                    || batchTokens < 0 || checkpointEvery < 0) {
                throw new CliException("--rank >= 1, --seq-len >= 2, --epochs >= 1, --max-steps >= 0, --val-split and --dropout in [0, 1),"
                        + " --batch-tokens >= 0 and --checkpoint-every >= 0 are required");
            }
            java.util.List<ml.juno.engine.model.block.Projection> ts = shape.projections();
            if (!Files.isRegularFile(data)) {
                throw new CliException("data file not found: " + data);
            }
            ml.juno.engine.lora.LoraCheckpoint checkpoint = resume == null ? null : readCheckpoint(resume);
            PrintWriter err = spec.commandLine().getErr();
            try (GgufFile base = GgufFile.open(model.resolve());
                 ml.juno.engine.kernel.Backend backend = ml.juno.engine.kernel.Backends.select(1)) {
                var tokenizer = ml.juno.coordinator.tokenizer.Tokenizer.fromGguf(base);
                java.util.List<LoraTraining.Example> chunks = TrainingData.examples(data, tokenizer,
                        () -> ml.juno.coordinator.tokenizer.ChatTemplates.forModel(base.metadata(), tokenizer), seqLen);
                var config = ml.juno.engine.model.Architectures.forName(base.metadata().getString(
                        ml.juno.engine.gguf.GgufKeys.GENERAL_ARCHITECTURE)).config(base);
                ml.juno.engine.lora.LoraTrainer trainer;
                try {
                    trainer = new ml.juno.engine.lora.LoraTrainer(base, config, backend);
                    trainer.requireTrainable(ts);
                } catch (IllegalArgumentException e) {
                    throw new CliException(e.getMessage());
                }
                int nVal = chunks.size() > 1 ? (int) Math.floor(chunks.size() * valSplit) : 0;
                java.util.List<LoraTraining.Example> train = new java.util.ArrayList<>();
                java.util.List<LoraTraining.Example> val = new java.util.ArrayList<>();
                for (int i = 0; i < chunks.size(); i++) {
                    (i < chunks.size() - nVal ? train : val).add(chunks.get(i));
                }
                int steps = maxSteps > 0 ? maxSteps : LoraTraining.stepsOf(train, epochs, seed, batchTokens);
                java.util.Map<String, String> settings = new java.util.LinkedHashMap<>();
                settings.put("data", data.getFileName().toString());
                settings.put("lr", Float.toString(lr));
                settings.put("weight-decay", Float.toString(weightDecay));
                settings.put("warmup", Integer.toString(warmup));
                settings.put("steps", Integer.toString(steps));
                settings.put("seq-len", Integer.toString(seqLen));
                settings.put("clip", Float.toString(clip));
                settings.put("seed", Long.toString(seed));
                if (dropout > 0) {
                    settings.put("dropout", Float.toString(dropout));
                }
                if (batchTokens > 0) {
                    settings.put("batch-tokens", Integer.toString(batchTokens));
                }
                LoraAdapter fresh = ml.juno.engine.lora.LoraTrainer.init(ml.juno.engine.lora.BaseFingerprint.of(base), ts, shape.rank, shape.alpha,
                        shape.rsLora, seed, settings);
                double valBefore = val.isEmpty() ? Double.NaN : LoraTraining.evaluate(trainer, fresh, val);
                var options = new LoraTraining.Options(lr, weightDecay, Math.min(warmup, steps), steps, clip, seed, dropout, batchTokens);
                LoraTraining.Run run;
                if (checkpoint != null) {
                    if (!checkpoint.adapter().header().equals(fresh.header())) {
                        throw new CliException(resume + " was made with another base, targets, rank, alpha or settings: "
                                + checkpoint.adapter().header().training() + " (rank " + checkpoint.adapter().header().rank() + ", targets "
                                + checkpoint.adapter().header().targets() + ") against this run's " + settings + " (rank " + shape.rank
                                + ", targets " + ts + ")");
                    }
                    try {
                        run = LoraTraining.Run.resume(trainer, checkpoint, train, val, options);
                    } catch (IllegalArgumentException e) {
                        throw new CliException(resume + ": " + e.getMessage());
                    }
                    err.printf("resuming %s at step %d of %d%n", resume, run.stepsDone(), steps);
                } else {
                    run = new LoraTraining.Run(trainer, fresh, train, val, options);
                }
                Path ckptPath = checkpointPath(output);
                long t0 = System.nanoTime();
                int first = run.stepsDone();
                long[] tokens = {0};
                double[] lastVal = {Double.NaN};
                LoraTraining.Result result = run.train(st -> {
                    tokens[0] += st.tokens();
                    if (!Double.isNaN(st.valLoss())) {
                        lastVal[0] = st.valLoss();
                    }
                    if (st.step() % 10 == 0 || st.step() == steps - 1 || !Double.isNaN(st.valLoss())) {
                        double secs = (System.nanoTime() - t0) / 1e9;
                        int doneHere = st.step() + 1 - first;
                        err.printf(java.util.Locale.ROOT, "\rstep %d/%d  loss %.4f%s  lr %.2e  %.0f tok/s  ETA %.0f s   ", st.step() + 1, steps,
                                st.loss(), Double.isNaN(lastVal[0]) ? "" : String.format(java.util.Locale.ROOT, "  val %.4f", lastVal[0]),
                                st.lr(), tokens[0] / secs, secs / doneHere * (steps - st.step() - 1));
                        err.flush();
                    }
                }, checkpointEvery, c -> c.write(ckptPath));
                err.println();
                LoraAdapter out = result.adapter();
                LoraFile.write(output, out);
                double[] losses = result.losses();
                PrintWriter w = spec.commandLine().getOut();
                w.printf(java.util.Locale.ROOT, "wrote %s: %d steps on %d chunks, loss %.4f -> %.4f%s%s%n", output, steps, train.size(),
                        losses[0], losses[losses.length - 1],
                        val.isEmpty() ? "" : String.format(java.util.Locale.ROOT, ", validation loss %.4f -> %.4f (best, step %d)", valBefore,
                                result.bestValLoss(), result.bestStep()),
                        checkpointEvery > 0 && steps >= checkpointEvery ? ", checkpoint " + ckptPath : "");
                w.flush();
                return 0;
            }
        }

        static Path checkpointPath(Path output) {
            return output.resolveSibling(output.getFileName() + ".ckpt");
        }

        private static ml.juno.engine.lora.LoraCheckpoint readCheckpoint(Path p) {
            try {
                if (!Files.isRegularFile(p)) {
                    throw new CliException("checkpoint not found: " + p);
                }
                if (!ml.juno.engine.lora.LoraCheckpoint.isCheckpoint(p)) {
                    Path beside = checkpointPath(p);
                    if (!Files.isRegularFile(beside)) {
                        throw new CliException(p + " is not a training checkpoint and no " + beside.getFileName()
                                + " lies beside it (write one with --checkpoint-every N)");
                    }
                    p = beside;
                }
                return ml.juno.engine.lora.LoraCheckpoint.read(p);
            } catch (IOException e) {
                throw new CliException(e.getMessage());
            }
        }
    }
}
