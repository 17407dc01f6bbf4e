package ml.juno.engine.model;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import ml.juno.engine.model.gemma3.Gemma3Architecture;
import ml.juno.engine.model.llama.LlamaArchitecture;
import ml.juno.engine.model.phi3.Phi3Architecture;
import ml.juno.engine.model.qwen2.Qwen2Architecture;
import ml.juno.engine.model.qwen3.Qwen3Architecture;
import ml.juno.engine.model.qwen3moe.Qwen3MoeArchitecture;

/** The registry of supported architectures, keyed by {@code general.architecture}. */
public final class Architectures {
    private static final Map<String, Architecture> BY_NAME = new LinkedHashMap<>();

    static {
        register(new LlamaArchitecture());
        register(new Qwen2Architecture());
        register(new Qwen3Architecture());
        register(new Qwen3MoeArchitecture());
        register(new Phi3Architecture());
        register(new Gemma3Architecture());
    }

    private Architectures() {}

    private static void register(Architecture a) {
        for (String n : a.names()) {
            BY_NAME.put(n, a);
        }
    }

    /** Names of every supported architecture. */
    public static List<String> supported() {
        return List.copyOf(BY_NAME.keySet());
    }

    /** The architecture for {@code name}; an unknown one is refused with the list of supported ones. */
    public static Architecture forName(String name) {
        Architecture a = BY_NAME.get(name);
        if (a == null) {
            throw new IllegalArgumentException("unsupported architecture '" + name + "'; supported: " + String.join(", ", supported()));
        }
        return a;
    }
}
