package ml.juno.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code juno gguf-info FILE}: metadata (long arrays summarised) and the tensor table. */
@Command(name = "gguf-info", mixinStandardHelpOptions = true,
        description = "Print a GGUF file's metadata (long arrays summarised) and its tensor table (name, type, shape, offset, bytes).")
final class GgufInfoCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "FILE", description = "The GGUF file.")
    Path file;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Override
    public Integer call() throws IOException {
        if (!Files.isRegularFile(file)) {
            throw new CliException("file not found: " + file);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (GgufFile f = GgufFile.open(file)) {
            if (json) {
                out.println(new ObjectMapper().writeValueAsString(GgufInfo.describe(f)));
            } else {
                out.print(GgufInfo.text(f));
            }
        }
        out.flush();
        return 0;
    }
}
