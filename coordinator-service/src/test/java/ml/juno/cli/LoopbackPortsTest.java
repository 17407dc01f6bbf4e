package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

class LoopbackPortsTest {

    @Test
    void picksABindablePortBelowTheEphemeralRange() throws Exception {
        int low = LoopbackPorts.ephemeralLow();
        if (java.nio.file.Files.isReadable(java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range"))) {
            assertTrue(low >= 1024, "the ephemeral range was misread: " + low);
        }
        for (int i = 0; i < 20; i++) {
            int port = LoopbackPorts.pick();
            if (low > 11_000) {
                assertTrue(port >= 10_000 && port < low, port + " is not below the ephemeral range starting at " + low);
            }
            try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                assertTrue(s.isBound());
            }
        }
    }

    @Test
    void neverPicksAPortAlreadyPromised() {
        // every port of the random range promised (a cluster's API port, earlier nodes): it must look elsewhere
        int low = Math.max(LoopbackPorts.ephemeralLow(), 10_001);
        int[] promised = new int[low - 10_000];
        for (int i = 0; i < promised.length; i++) {
            promised[i] = 10_000 + i;
        }
        for (int i = 0; i < 5; i++) {
            int port = LoopbackPorts.pick(promised);
            assertTrue(port < 10_000 || port >= low, port + " was promised already");
        }
    }

    @Test
    void aPortWithALoopbackListenerIsNotFree() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            assertFalse(LoopbackPorts.isFree(s.getLocalPort()));
        }
    }
}
