package ml.juno.cli;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.lora.LoraAdapters;
import picocli.CommandLine.Option;

/** {@code --lora-modules name=FILE[,name=FILE…]}: named adapters a request picks by its {@code model} (servers only). */
final class LoraModulesOption {

    @Option(names = "--lora-modules", paramLabel = "NAME=FILE[,NAME=FILE…]", split = ",",
            description = "Named LoRA adapters (as vLLM): each is listed in /v1/models with the model as its parent, and a request whose model is NAME gets it; requests with different adapters share one batch.")
    List<String> loraModules = new ArrayList<>();

    /** The named adapters, each file checked to exist. */
    List<LoraAdapters.Module> modules() {
        List<LoraAdapters.Module> out;
        try {
            out = LoraAdapters.Module.parseList(String.join(",", loraModules));
        } catch (IllegalArgumentException e) {
            throw new CliException("--lora-modules: " + e.getMessage());
        }
        List<LoraAdapters.Module> abs = new ArrayList<>();
        for (LoraAdapters.Module m : out) {
            if (!Files.isRegularFile(m.path())) {
                throw new CliException("--lora-modules: adapter file of '" + m.name() + "' not found: " + m.path());
            }
            abs.add(new LoraAdapters.Module(m.name(), m.path().toAbsolutePath()));
        }
        return abs;
    }

    /** The {@code juno.lora-modules} property value ({@code name=PATH} entries, comma-separated), or {@code null}. */
    String modulesProperty() {
        List<String> parts = new ArrayList<>();
        for (LoraAdapters.Module m : modules()) {
            if (m.path().toString().contains(",")) {
                throw new CliException("--lora-modules: adapter paths may not contain ',': " + m.path());
            }
            parts.add(m.name() + "=" + m.path());
        }
        return parts.isEmpty() ? null : String.join(",", parts);
    }

}
