package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class CpuPinningTest {

    @Test
    void linuxCpuLists_parseToAscendingCores() {
        assertEquals(List.of(0, 1, 2, 3, 6, 8, 9), CpuPinning.parseList(" 8-9,0-3,6\n"));
        assertEquals(List.of(5), CpuPinning.parseList("5"));
        assertEquals("0-3,6,8-9", CpuPinning.describe(List.of(0, 1, 2, 3, 6, 8, 9)));
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseList("3-1"));
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseList("a"));
        assertThrows(IllegalArgumentException.class, () -> CpuPinning.parseList(""));
    }

    @Test
    void thisProcess_mayRunOnSomeCores() {
        List<Integer> cpus = CpuPinning.allowedCpus();
        assertFalse(cpus.isEmpty());
        assertTrue(cpus.getFirst() >= 0 && cpus.size() >= Runtime.getRuntime().availableProcessors(), "the JVM counts no more cores than Linux lets us use: " + cpus);
    }

    @Test
    void eachProcessGetsACoreOfItsOwn_andTooFewCoresAreAClearError() {
        assertEquals(List.of(2, 5), CpuPinning.assign(2, List.of(2, 5, 7)));
        CliException e = assertThrows(CliException.class, () -> CpuPinning.assign(3, List.of(0, 1)));
        assertTrue(e.getMessage().contains("3 node processes") && e.getMessage().contains("only 2 cores (0-1)"), e.getMessage());
    }

    @Test
    void aPinnedCommand_runsUnderTaskset() {
        assertEquals(List.of("taskset", "-c", "1", "java", "-jar", "x.jar"), CpuPinning.onCpu(1, List.of("java", "-jar", "x.jar")));
    }
}
