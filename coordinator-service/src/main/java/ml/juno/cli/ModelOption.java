package ml.juno.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --model-path} option shared by commands that read a model (env {@code MODEL_PATH}). */
final class ModelOption {

    @Option(names = {"--model-path", "-m"}, defaultValue = "${env:MODEL_PATH}", paramLabel = "FILE",
            description = "GGUF model file (env MODEL_PATH; default: the bundled models/stories260K.gguf).")
    Path modelPath;

    /** The chosen model, or the bundled one; a missing file is a clear error. */
    Path resolve() {
        Path p = modelPath != null ? modelPath : JunoHome.detect().bundledModel();
        if (modelPath == null && !Files.isRegularFile(p)) {
            throw new CliException("bundled model missing: " + p + "; run 'juno local --model-path FILE' or 'juno --help'");
        }
        if (!Files.isRegularFile(p)) {
            throw new CliException("model file not found: " + p);
        }
        return p;
    }
}
