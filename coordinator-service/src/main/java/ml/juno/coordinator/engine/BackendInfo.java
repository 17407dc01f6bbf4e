package ml.juno.coordinator.engine;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import ml.juno.engine.kernel.Backend;

/**
 * Which kernels compute an engine's steps, for bench output, logs and health data.
 *
 * @param kind {@code native} (Juno's C kernels) or {@code java}; for a cluster whose nodes differ, each value once
 *             ({@code native,java}); {@code unknown} before anything is loaded
 * @param isa  their instruction set ({@code avx512vnni}, {@code avxvnni}, {@code avx2}, or {@code vector256} for the Java
 *             kernels); for a cluster, as {@code kind}
 */
public record BackendInfo(String kind, String isa) {

    /** Nothing loaded yet (a cluster before its nodes answered). */
    public static final BackendInfo UNKNOWN = new BackendInfo("unknown", "unknown");

    public static BackendInfo of(Backend backend) {
        return new BackendInfo(backend.kind(), backend.isa());
    }

    /** The backends of several nodes as one: each distinct kind and isa once, comma-separated, in node order. */
    public static BackendInfo combine(List<BackendInfo> parts) {
        Set<String> kinds = new LinkedHashSet<>();
        Set<String> isas = new LinkedHashSet<>();
        for (BackendInfo b : parts) {
            if (b != null && !b.equals(UNKNOWN)) {
                kinds.add(b.kind());
                isas.add(b.isa());
            }
        }
        return kinds.isEmpty() ? UNKNOWN : new BackendInfo(String.join(",", kinds), String.join(",", isas));
    }

    /** E.g. {@code native (avx512vnni)} or {@code java (vector256)}. */
    @Override
    public String toString() {
        return kind + " (" + isa + ")";
    }
}
