package ml.juno.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.lora.LoraAdapters;
import ml.juno.engine.lora.LoraMerge;
import ml.juno.engine.lora.LoraPlan;
import ml.juno.engine.quantize.ConsoleProgress;
import ml.juno.engine.quantize.QuantType;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code juno merge}: a GGUF with LoRA adapters baked into its weights. */
@Command(name = "merge", mixinStandardHelpOptions = true,
        description = {"Write a copy of the model with LoRA adapters merged into its weights (W + scale·B·A).",
                "Adapted tensors are written as F32 by default: re-quantizing them (--type) rounds small adapter deltas away.",
                "Every other tensor and all metadata are copied byte for byte."})
final class MergeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    ModelOption model = new ModelOption();

    @Option(names = "--lora", required = true, paramLabel = "FILE[:SCALE]",
            description = "Adapter to merge (Juno .lora or llama.cpp GGUF LoRA), scaled by SCALE (default 1); repeatable, summed.")
    List<String> lora = new ArrayList<>();

    @Option(names = "--output", required = true, paramLabel = "OUT.gguf", description = "File to write (a temporary file, then renamed).")
    java.nio.file.Path output;

    @Option(names = "--type", defaultValue = "F32", paramLabel = "TYPE",
            description = "Type of the adapted tensors: keep (each its own), F32 (default, exact), F16, BF16, Q8_0, Q4_0, Q4_K_M, … (a mix name uses its main type).")
    String type;

    @Override
    public Integer call() throws IOException {
        LoraMerge.Target target;
        try {
            target = type.equalsIgnoreCase("keep") ? LoraMerge.Target.KEEP : new LoraMerge.Target(QuantType.parse(type).defaultType);
        } catch (IllegalArgumentException e) {
            throw new CliException("--type " + type + ": " + e.getMessage());
        }
        java.nio.file.Path in = model.resolve();
        if (in.toAbsolutePath().normalize().equals(output.toAbsolutePath().normalize())) {
            throw new CliException("--output is the model file itself: " + output);
        }
        LoraPlayOption opt = new LoraPlayOption();
        opt.loraPlay = lora;
        long t0 = System.nanoTime();
        LoraMerge.Report report;
        try (GgufFile base = GgufFile.open(in)) {
            List<LoraPlan.Played> played;
            try {
                played = LoraAdapters.play(opt.specs(), base);
            } catch (IOException e) {
                throw new CliException(e.getMessage());
            }
            report = LoraMerge.merge(base, played, output, target, ConsoleProgress.forTerminal());
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        PrintWriter w = spec.commandLine().getOut();
        w.printf(Locale.ROOT, "wrote %s: %d tensors adapted (%s), %d copied, %.2f MiB in %.1f s%n", output, report.adapted(),
                target.type() == null ? "types kept" : target.type(), report.copied(), report.bytes() / 1048576.0,
                (System.nanoTime() - t0) / 1e9);
        w.flush();
        return 0;
    }
}
