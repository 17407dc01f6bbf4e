package ml.juno.engine.lora;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import ml.juno.engine.gguf.GgufFile;

/**
 * Loads the adapters a command line names ({@code PATH[:SCALE]}), either format, checked against the base model.
 */
public final class LoraAdapters {

    private LoraAdapters() {}

    /** A {@code --lora-play} argument: the file and its scale (default 1). */
    public record Spec(Path path, float scale) {
        /** {@code PATH} or {@code PATH:SCALE}; a last {@code :} part that is not a number belongs to the path. */
        public static Spec parse(String arg) {
            int colon = arg.lastIndexOf(':');
            if (colon > 0) {
                String tail = arg.substring(colon + 1);
                try {
                    float s = Float.parseFloat(tail);
                    if (!Float.isFinite(s)) {
                        throw new IllegalArgumentException("LoRA scale in '" + arg + "' is not a finite number");
                    }
                    return new Spec(Path.of(arg.substring(0, colon)), s);
                } catch (NumberFormatException e) {
                    // not a scale: part of the path
                }
            }
            return new Spec(Path.of(arg), 1f);
        }

        @Override
        public String toString() {
            return path + ":" + scale;
        }
    }

    /** A {@code --lora-modules} entry: a name requests use as {@code model}, and the adapter file. */
    public record Module(String name, Path path) {
        public Module {
            if (name == null || name.isBlank() || !name.equals(name.trim()) || name.contains(",") || name.contains("=")) {
                throw new IllegalArgumentException("bad LoRA module name '" + name + "'");
            }
        }

        /** {@code name=PATH[,name=PATH…]}; names must be distinct. */
        public static List<Module> parseList(String list) {
            List<Module> out = new ArrayList<>();
            for (String part : list.split(",")) {
                if (part.isBlank()) {
                    continue;
                }
                int eq = part.indexOf('=');
                if (eq <= 0 || eq == part.length() - 1) {
                    throw new IllegalArgumentException("LoRA module '" + part + "' is not name=PATH");
                }
                Module m = new Module(part.substring(0, eq).trim(), Path.of(part.substring(eq + 1).trim()));
                for (Module o : out) {
                    if (o.name.equals(m.name)) {
                        throw new IllegalArgumentException("LoRA module name '" + m.name + "' given twice");
                    }
                }
                out.add(m);
            }
            return out;
        }
    }

    /** The named adapters, as adapter ids 1, 2, … in order, each played at scale 1 on the rows that ask for it. */
    public static List<LoraPlan.Played> modules(List<Module> modules, GgufFile base) throws IOException {
        List<LoraPlan.Played> out = new ArrayList<>();
        for (int i = 0; i < modules.size(); i++) {
            out.add(new LoraPlan.Played(load(modules.get(i).path(), base), 1f, i + 1));
        }
        return out;
    }

    /** Reads {@code path} ({@code .lora} or llama.cpp GGUF LoRA) and checks it fits {@code base}. */
    public static LoraAdapter load(Path path, GgufFile base) throws IOException {
        if (!Files.isRegularFile(path)) {
            throw new IOException("LoRA adapter " + path + " does not exist or is not a file");
        }
        LoraAdapter a;
        if (GgufLora.isGguf(path)) {
            a = GgufLora.read(path, base);
        } else {
            a = LoraFile.read(path);
            try {
                a.checkBase(BaseFingerprint.of(base), path.toString());
            } catch (IllegalArgumentException e) {
                throw new IOException(e.getMessage(), e);
            }
        }
        return a;
    }

    /** Every {@code --lora-play} spec loaded, as adapters played on every row. */
    public static List<LoraPlan.Played> play(List<Spec> specs, GgufFile base) throws IOException {
        List<LoraPlan.Played> out = new ArrayList<>();
        for (Spec s : specs) {
            out.add(new LoraPlan.Played(load(s.path(), base), s.scale(), 0));
        }
        return out;
    }
}
