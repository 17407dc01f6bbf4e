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
    void aPortWithALoopbackListenerIsNotFree() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            assertFalse(LoopbackPorts.isFree(s.getLocalPort()));
        }
    }
}
