package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import javax.management.ObjectName;
import org.junit.jupiter.api.Test;

/** Loading the CPU backend installs the compiler directive that keeps C2 from inlining the vector kernels. */
class JitDirectivesTest {

    @Test
    void cpuBackend_installsTheNoInlineDirectiveForTheKernels() throws Exception {
        try (CpuBackend ignored = new CpuBackend(1)) {
            String printed = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                    new ObjectName("com.sun.management:type=DiagnosticCommand"), "compilerDirectivesPrint",
                    new Object[] {new String[0]}, new String[] {String[].class.getName()});
            assertTrue(printed.contains("ml/juno/engine/kernel/cpu/*.*"), printed);
            for (String kernel : new String[] {"*.decodeQuants", "*.toFloatLanes", "*.dotFloat4x2", "*.dotFloat4"}) {
                assertTrue(printed.contains("-ml/juno/engine/kernel/cpu/" + kernel), kernel + " in\n" + printed);
            }
        }
    }
}
