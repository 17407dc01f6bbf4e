package ml.juno.e2e;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Random;
import ml.juno.e2e.harness.DelayProxy;
import org.junit.jupiter.api.Test;

/** The relay that stands in for {@code tc netem delay}: bytes and order kept, each direction held for the delay. */
class DelayProxyIT {

    @Test
    void relaysEveryByteInOrder_andEachRoundTripTakesTwiceTheDelay() throws Exception {
        try (ServerSocket echo = new ServerSocket(0)) {
            Thread echoer = Thread.ofVirtual().start(() -> {
                try (Socket s = echo.accept(); InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                    in.transferTo(out);
                } catch (Exception e) {
                    // the test ends the connection
                }
            });
            try (DelayProxy proxy = DelayProxy.start("127.0.0.1", 0, new InetSocketAddress("127.0.0.1", echo.getLocalPort()),
                    Duration.ofMillis(20));
                 Socket s = new Socket("127.0.0.1", proxy.port())) {
                s.setTcpNoDelay(true);
                InputStream in = s.getInputStream();
                OutputStream out = s.getOutputStream();
                // round trips of one byte: each is held 20 ms going and 20 ms coming back
                long t0 = System.nanoTime();
                for (int i = 0; i < 5; i++) {
                    out.write(i);
                    out.flush();
                    assertEquals(i, in.read());
                }
                double perTrip = (System.nanoTime() - t0) / 5 / 1e6;
                assertTrue(perTrip >= 40 && perTrip < 200, "round trip " + perTrip + " ms through a 20 ms relay");
                // a megabyte of random bytes comes back whole and in order
                byte[] data = new byte[1 << 20];
                new Random(7).nextBytes(data);
                Thread writer = Thread.ofVirtual().start(() -> {
                    try {
                        out.write(data);
                        out.flush();
                        s.shutdownOutput();
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                byte[] back = in.readAllBytes();
                writer.join();
                assertArrayEquals(data, back);
            }
            echoer.join(5_000);
        }
    }
}
