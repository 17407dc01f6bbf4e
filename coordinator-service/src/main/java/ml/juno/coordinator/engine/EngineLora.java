package ml.juno.coordinator.engine;

import java.util.List;
import ml.juno.engine.lora.LoraAdapters;

/**
 * The LoRA adapters an engine serves: {@code play} on every request (summed), and {@code modules}, named adapters a
 * request chooses by naming one as its {@code model} (ids 1, 2, … in this order; 0 is none). Rows of different
 * adapters share one batch.
 */
public record EngineLora(List<LoraAdapters.Spec> play, List<LoraAdapters.Module> modules) {
    public static final EngineLora NONE = new EngineLora(List.of(), List.of());

    public EngineLora {
        play = List.copyOf(play);
        modules = List.copyOf(modules);
    }

    /** Adapters played on every request only. */
    public static EngineLora play(List<LoraAdapters.Spec> play) {
        return new EngineLora(play, List.of());
    }

    public boolean isEmpty() {
        return play.isEmpty() && modules.isEmpty();
    }

    /** The id of the named adapter {@code name} (1-based), or 0 when none has that name. */
    public int idOf(String name) {
        for (int i = 0; i < modules.size(); i++) {
            if (modules.get(i).name().equals(name)) {
                return i + 1;
            }
        }
        return 0;
    }
}
