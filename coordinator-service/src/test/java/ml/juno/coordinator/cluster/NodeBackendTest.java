package ml.juno.coordinator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ml.juno.coordinator.engine.BackendInfo;
import ml.juno.node.v1.ShardInfo;
import org.junit.jupiter.api.Test;

class NodeBackendTest {

    @Test
    void aNodesShardInfo_saysItsBackendAndIsa_anOlderNodeIsUnknown() {
        assertEquals(new BackendInfo("native", "avx2"),
                NodeCluster.nodeBackend(ShardInfo.newBuilder().setBackend("native").setIsa("avx2").build()));
        assertEquals(new BackendInfo("java", "unknown"), NodeCluster.nodeBackend(ShardInfo.newBuilder().setBackend("java").build()));
        assertEquals(BackendInfo.UNKNOWN, NodeCluster.nodeBackend(ShardInfo.getDefaultInstance()));
    }
}
