package ml.juno.engine;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/** Facts about the engine build and the CPU it runs on, for status pages and logs. */
public final class EngineInfo {

    public static final String VERSION = "0.1.0";

    /** The widest float species this CPU supports; kernels pick theirs once from the same source. */
    public static final VectorSpecies<Float> FLOAT_SPECIES = FloatVector.SPECIES_PREFERRED;

    private EngineInfo() {}

    /** E.g. {@code cpu-vector-512} on AVX-512, {@code cpu-vector-256} on AVX2. */
    public static String cpuBackendName() {
        return "cpu-vector-" + FLOAT_SPECIES.vectorBitSize();
    }

    /** Whether restricted FFM calls (needed by the GPU backends) are enabled for this JVM. */
    public static boolean nativeAccessEnabled() {
        return EngineInfo.class.getModule().isNativeAccessEnabled();
    }
}
