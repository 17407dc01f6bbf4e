package ml.juno.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Free TCP ports for servers that another process will bind a moment later ({@code juno cluster}'s nodes, {@code juno
 * test}'s clusters, the end-to-end tests).
 *
 * <p>A port found with {@code new ServerSocket(0)} comes from the kernel's ephemeral range, the same range every
 * outgoing connection takes its local port from. Between our check and the child's bind (seconds, while a JVM starts)
 * a health poll or a gRPC connection can take that very port, and the child then fails with "port in use". So ports
 * are picked at random below the ephemeral range, where the kernel never hands out local ports, and checked free by
 * binding them once. Where that range cannot be read, or no port there is free, it falls back to the kernel's choice.
 */
public final class LoopbackPorts {
    private static final int LOWEST = 10_000;
    private static final int TRIES = 64;

    private LoopbackPorts() {
    }

    /**
     * A port that is free on every local address now, is not one the kernel gives to outgoing connections, and is none
     * of {@code avoid}: ports already promised to servers that have not bound them yet (a cluster's API port, the nodes
     * picked before this one), which a bind check alone would find free. Zeros in {@code avoid} (slots not picked yet)
     * match nothing.
     */
    public static int pick(int... avoid) {
        int ephemeralLow = ephemeralLow();
        if (ephemeralLow > LOWEST + 1000) {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (int i = 0; i < TRIES; i++) {
                int port = rnd.nextInt(LOWEST, ephemeralLow);
                if (!promised(port, avoid) && isFree(port)) {
                    return port;
                }
            }
        }
        for (int i = 0; i < TRIES; i++) {
            try (ServerSocket s = new ServerSocket(0)) {
                if (!promised(s.getLocalPort(), avoid)) {
                    return s.getLocalPort();
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot find a free TCP port", e);
            }
        }
        throw new UncheckedIOException(new IOException("cannot find a free TCP port outside " + java.util.Arrays.toString(avoid)));
    }

    private static boolean promised(int port, int[] avoid) {
        for (int a : avoid) {
            if (a == port) {
                return true;
            }
        }
        return false;
    }

    /** Whether a server could bind {@code port} now (the wildcard bind also fails when 127.0.0.1 alone is taken). */
    static boolean isFree(int port) {
        try (ServerSocket any = new ServerSocket(port)) {
            return true;
        } catch (IOException inUse) {
            return false;
        }
    }

    /** The first port of Linux's ephemeral range, or 0 where that is unknown. */
    static int ephemeralLow() {
        Path range = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        // Not Files.readString: on this JDK it returned a single byte of the procfs file (reported size 0).
        try (BufferedReader r = Files.newBufferedReader(range)) {
            String[] parts = r.readLine().trim().split("\\s+");
            return Integer.parseInt(parts[0]);
        } catch (IOException | RuntimeException unknown) {
            return 0;
        }
    }
}
