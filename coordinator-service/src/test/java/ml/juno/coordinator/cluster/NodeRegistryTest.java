package ml.juno.coordinator.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class NodeRegistryTest {
    final AtomicLong now = new AtomicLong();
    final NodeRegistry registry = new NodeRegistry(Duration.ofSeconds(10), now::get);
    static final NodeAddress A = NodeAddress.parse("10.0.0.5:19092");
    static final NodeAddress B = NodeAddress.parse("10.0.0.4:19092");

    List<String> ids() {
        return registry.members().stream().map(NodeRegistry.Member::id).toList();
    }

    @Test
    void aNodeJoinsOnce_renewsItsLeaseWithoutAChange_andMembersAreInIdOrder() {
        long v0 = registry.version();
        assertTrue(registry.announce(A, "node-1"));
        assertTrue(registry.announce(B, "node-0"));
        long v = registry.version();
        assertEquals(v0 + 2, v);
        assertFalse(registry.announce(A, "node-1"), "a renewal is no join");
        assertEquals(v, registry.version(), "nor a membership change");
        assertEquals(List.of("node-0", "node-1"), ids(), "rank order by id, whatever the join order");
        assertTrue(registry.announce(A, "node-2"), "another node at the same address is a change");
        assertEquals(v + 1, registry.version());
    }

    @Test
    void aNodeLeavesWhenItSaysSo_orWhenItsLeaseRunsOut() {
        registry.announce(A, "a");
        registry.announce(B, "b");
        assertTrue(registry.leave(A, "it said so"));
        assertFalse(registry.leave(A, "again"), "not a member any more");
        assertEquals(List.of("b"), ids());
        now.addAndGet(Duration.ofSeconds(9).toNanos());
        registry.announce(B, "b"); // renewed at 9 s: lives until 19 s
        now.addAndGet(Duration.ofSeconds(9).toNanos());
        assertEquals(List.of("b"), ids());
        long v = registry.version();
        now.addAndGet(Duration.ofSeconds(2).toNanos());
        assertEquals(List.of(), ids(), "20 s: its lease ran out");
        assertEquals(v + 1, registry.version());
    }

    @Test
    void awaitChange_returnsAtAJoin_orAfterItsTimeout() throws Exception {
        long v = registry.version();
        assertEquals(v, registry.awaitChange(v, Duration.ofMillis(20)));
        Thread joiner = Thread.ofVirtual().start(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            registry.announce(A, "a");
        });
        long t0 = System.nanoTime();
        assertEquals(v + 1, registry.awaitChange(v, Duration.ofSeconds(20)));
        assertTrue(System.nanoTime() - t0 < Duration.ofSeconds(10).toNanos());
        joiner.join();
    }

    @Test
    void aLeaseMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new NodeRegistry(Duration.ZERO));
    }
}
