package ml.juno.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class EngineInfoTest {

    @Test
    void testJvm_hasVectorModuleAndNativeAccess() {
        // the build passes --add-modules=jdk.incubator.vector and --enable-native-access to every test JVM
        assertTrue(EngineInfo.FLOAT_SPECIES.length() >= 4, "vector species should have at least 4 float lanes");
        assertTrue(EngineInfo.nativeAccessEnabled(), "native access must be enabled for the GPU backends");
        var kernels = ml.juno.engine.kernel.cpu.NativeKernels.load();
        boolean javaAsked = ml.juno.engine.kernel.Backends.requestedKind() == ml.juno.engine.kernel.Backends.Kind.JAVA;
        String expected = kernels.ok() && !javaAsked
                ? "cpu-native-" + kernels.kernels().isa() : "cpu-vector-" + EngineInfo.FLOAT_SPECIES.vectorBitSize();
        assertEquals(expected, EngineInfo.cpuBackendName());
    }
}
