package ml.juno.cli;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.lora.LoraAdapters;
import picocli.CommandLine.Option;

/** {@code --lora-play A.lora[:SCALE]}, repeatable: adapters played on every request, summed. */
final class LoraPlayOption {

    @Option(names = "--lora-play", paramLabel = "FILE[:SCALE]",
            description = "Play a LoRA adapter (Juno .lora or llama.cpp GGUF LoRA) on every request, scaled by SCALE (default 1); repeatable, the adapters are summed.")
    List<String> loraPlay = new ArrayList<>();

    /** The specs, each file checked to exist (the fit to the model is checked when it loads). */
    List<LoraAdapters.Spec> specs() {
        List<LoraAdapters.Spec> out = new ArrayList<>();
        for (String s : loraPlay) {
            LoraAdapters.Spec spec;
            try {
                spec = LoraAdapters.Spec.parse(s);
            } catch (IllegalArgumentException e) {
                throw new CliException("--lora-play " + s + ": " + e.getMessage());
            }
            if (!Files.isRegularFile(spec.path())) {
                throw new CliException("--lora-play: adapter file not found: " + spec.path());
            }
            out.add(new LoraAdapters.Spec(spec.path().toAbsolutePath(), spec.scale()));
        }
        return out;
    }

    /** The {@code juno.lora-play} property value (absolute {@code PATH:SCALE} entries, comma-separated), or {@code null}. */
    String property() {
        List<LoraAdapters.Spec> specs = specs();
        if (specs.isEmpty()) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        for (LoraAdapters.Spec s : specs) {
            if (s.path().toString().contains(",")) {
                throw new CliException("--lora-play: adapter paths may not contain ',': " + s.path());
            }
            parts.add(s.toString());
        }
        return String.join(",", parts);
    }
}
