package ml.juno.engine;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.cpu.NativeKernels;

/** Facts about the engine build and the CPU it runs on, for status pages and logs. */
public final class EngineInfo {

    public static final String VERSION = "0.1.0";

    /** The widest float species this CPU supports; kernels pick theirs once from the same source. */
    public static final VectorSpecies<Float> FLOAT_SPECIES = FloatVector.SPECIES_PREFERRED;

    private EngineInfo() {}

    /**
     * The CPU backend a model loaded now would get ({@link Backends#select}): e.g. {@code cpu-native-avx512vnni}
     * where the native kernels load and are not switched off, else the Java kernels' {@code cpu-vector-512} or
     * {@code cpu-vector-256}.
     */
    public static String cpuBackendName() {
        String java = "cpu-vector-" + FLOAT_SPECIES.vectorBitSize();
        try {
            if (Backends.requestedKind() == Backends.Kind.JAVA) {
                return java;
            }
        } catch (IllegalArgumentException e) { // a bad JUNO_BACKEND: the commands that load a model refuse it
            return java;
        }
        NativeKernels.Loaded l = NativeKernels.load();
        return l.ok() ? "cpu-native-" + l.kernels().isa() : java;
    }

    /** Whether restricted FFM calls (needed by the GPU backends) are enabled for this JVM. */
    public static boolean nativeAccessEnabled() {
        return EngineInfo.class.getModule().isNativeAccessEnabled();
    }
}
