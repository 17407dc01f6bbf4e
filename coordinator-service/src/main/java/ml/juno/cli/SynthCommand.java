package ml.juno.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import ml.juno.engine.quantize.ConsoleProgress;
import ml.juno.engine.synth.Synth;
import ml.juno.engine.synth.SynthOptions;
import ml.juno.engine.synth.SynthPreset;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code juno synth}: a random-weight model with a real model's shapes, for benchmarks. */
@Command(name = "synth", mixinStandardHelpOptions = true,
        description = {"Write a random-weight model with the exact shapes of a real one (llama or Qwen3-MoE), for benchmarks (llama.cpp loads it too).",
                "Weights are N(0, 1/fan_in), norms near 1."})
final class SynthCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--preset", required = true, paramLabel = "NAME", completionCandidates = PresetNames.class,
            description = "Model shape: ${COMPLETION-CANDIDATES} (qwen3moe-mini: Qwen3-MoE layout, 128 experts, top 8, ~3.8 GB at Q4_K_M).")
    String preset;

    @Option(names = "--type", defaultValue = "Q4_K_M", paramLabel = "TYPE", description = "Weight type, as juno quantize takes it (default: ${DEFAULT-VALUE}).")
    String type;

    @Option(names = {"-o", "--output"}, required = true, paramLabel = "OUT.gguf", description = "File to write.")
    Path out;

    @Option(names = "--seed", defaultValue = "42", description = "Random seed (default: ${DEFAULT-VALUE}); same seed, same file.")
    long seed;

    @Option(names = "--vocab-from", paramLabel = "FILE.gguf",
            description = "Copy the tokenizer of this GGUF (e.g. models/testdata/vocab/ggml-vocab-llama-spm.gguf); without it a synthetic vocabulary is written.")
    Path vocabFrom;

    @Option(names = {"-t", "--threads"}, defaultValue = "0", description = "Worker threads (default: all cores).")
    int threads;

    @Override
    public Integer call() throws IOException {
        if (vocabFrom != null && !Files.isRegularFile(vocabFrom)) {
            throw new CliException("vocabulary file not found: " + vocabFrom);
        }
        SynthPreset p;
        try {
            p = SynthPreset.named(preset);
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        long t0 = System.nanoTime();
        Synth.SynthReport report;
        try {
            report = Synth.run(new SynthOptions(p, type, out, seed, vocabFrom, threads), ConsoleProgress.forTerminal());
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        PrintWriter w = spec.commandLine().getOut();
        w.printf(Locale.ROOT, "wrote %s: %s, %s, %d tensors, %.2f GB in %.1f s%n", out, report.preset(), report.type(),
                report.tensorCount(), Files.size(out) / 1e9, (System.nanoTime() - t0) / 1e9);
        w.flush();
        return 0;
    }

    /** The presets' names, for the help text and shell completion. */
    static final class PresetNames implements Iterable<String> {
        @Override
        public java.util.Iterator<String> iterator() {
            return SynthPreset.PRESETS.stream().map(SynthPreset::name).iterator();
        }
    }
}
