package ml.juno.coordinator.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.Backends;
import org.junit.jupiter.api.Test;

class BackendInfoTest {

    @Test
    void ofABackend_isItsKindAndIsa_printedAsKindWithIsa() {
        try (Backend java = Backends.select(Backends.Kind.JAVA, 1)) {
            BackendInfo b = BackendInfo.of(java);
            assertEquals("java", b.kind());
            assertEquals(java.isa(), b.isa());
            assertEquals("java (" + java.isa() + ")", b.toString());
        }
    }

    @Test
    void nodesOfACluster_combineToEachDistinctValueOnce_inNodeOrder() {
        BackendInfo avx512 = new BackendInfo("native", "avx512vnni");
        BackendInfo java = new BackendInfo("java", "vector256");
        assertEquals(avx512, BackendInfo.combine(List.of(avx512, avx512, avx512)));
        assertEquals(new BackendInfo("native,java", "avx512vnni,vector256"), BackendInfo.combine(List.of(avx512, java, avx512)));
        assertEquals(new BackendInfo("native", "avx2,avx512vnni"),
                BackendInfo.combine(List.of(new BackendInfo("native", "avx2"), avx512)));
        assertEquals(avx512, BackendInfo.combine(Arrays.asList(BackendInfo.UNKNOWN, null, avx512)), "nodes not loaded yet are left out");
        assertEquals(BackendInfo.UNKNOWN, BackendInfo.combine(List.of()));
    }
}
