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
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code juno lora}: trade adapters with llama.cpp ({@code export}, {@code import}). Training and the interactive
 * trainer are not built yet and say so.
 */
@Command(name = "lora", mixinStandardHelpOptions = true,
        description = {"LoRA adapters: export to / import from llama.cpp's GGUF LoRA format.",
                "Training (lora train) and the interactive trainer (lora --model-path M) are not implemented yet.",
                "Play adapters with --lora-play on local, cluster, generate and bench; merge them with 'juno merge'."},
        subcommands = {LoraCommand.Export.class, LoraCommand.Import.class, LoraCommand.Train.class})
final class LoraCommand implements Callable<Integer> {

    @Unmatched
    String[] rest;

    @Override
    public Integer call() {
        throw new CliException("'juno lora' without a subcommand (the interactive trainer) is not implemented yet;"
                + " available: juno lora export, juno lora import");
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

    /** {@code juno lora train}: not built yet. */
    @Command(name = "train", description = "Train an adapter (not implemented yet).")
    static final class Train implements Callable<Integer> {
        @Unmatched
        String[] rest;

        @Override
        public Integer call() {
            throw new CliException("'juno lora train' is not implemented yet");
        }
    }
}
