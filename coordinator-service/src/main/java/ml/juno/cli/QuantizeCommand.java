package ml.juno.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import ml.juno.engine.quantize.ConsoleProgress;
import ml.juno.engine.quantize.ModelQuantizer;
import ml.juno.engine.quantize.QuantizeOptions;
import ml.juno.engine.quantize.QuantizeReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code juno quantize IN OUT TYPE}, with llama-quantize's flags and per-tensor choices. */
@Command(name = "quantize", mixinStandardHelpOptions = true,
        description = {"Convert a GGUF with F32/F16/BF16 weights to another type, choosing per-tensor types as llama.cpp's llama-quantize does.",
                "TYPE: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q4_K_M, Q5_K_M, F16, BF16, F32 (mixes such as Q4_K_M keep llama.cpp's rules)."})
final class QuantizeCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "IN.gguf", description = "Source model (F32, F16 or BF16 tensors).")
    Path in;

    @Parameters(index = "1", paramLabel = "OUT.gguf", description = "File to write (written to a temporary file, then renamed).")
    Path out;

    @Parameters(index = "2", paramLabel = "TYPE", description = "Target type.")
    String type;

    @Option(names = "--pure", description = "Give every quantizable tensor TYPE: no mix rules, no Q6_K output tensor.")
    boolean pure;

    @Option(names = "--tensor-type", paramLabel = "PATTERN=TYPE",
            description = "Override the type of tensors whose name matches PATTERN (regex, as llama-quantize); repeatable, first match wins.")
    List<String> tensorTypes = new ArrayList<>();

    @Option(names = {"-t", "--threads"}, defaultValue = "0", description = "Worker threads (default: all cores).")
    int threads;

    @Override
    public Integer call() throws IOException {
        if (!Files.isRegularFile(in)) {
            throw new CliException("input file not found: " + in);
        }
        if (in.toAbsolutePath().normalize().equals(out.toAbsolutePath().normalize())) {
            throw new CliException("input and output are the same file: " + in);
        }
        QuantizeReport report;
        long t0 = System.nanoTime();
        try {
            report = ModelQuantizer.run(new QuantizeOptions(in, out, type, pure, tensorTypes, threads), ConsoleProgress.forTerminal());
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        PrintWriter w = spec.commandLine().getOut();
        w.printf(Locale.ROOT, "wrote %s: %s, %d tensors, %.2f MiB -> %.2f MiB in %.1f s%s%n", out, report.fileType(),
                report.tensors().size(), report.inputBytes() / 1048576.0, report.outputBytes() / 1048576.0, secs,
                report.fallbacks() > 0 ? " (" + report.fallbacks() + " tensors fell back to another type: rows not divisible into blocks)" : "");
        w.flush();
        return 0;
    }
}
