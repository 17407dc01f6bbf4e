package ml.juno.e2e.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay that holds every chunk it forwards for a fixed time in each direction, so a connection through it sees a
 * round trip longer by twice the delay: a stand-in for {@code tc netem delay} on kernels built without
 * {@code CONFIG_NET_SCH_NETEM}. Order and bytes are kept; bandwidth is not limited. For hand-run measurements
 * ({@link #main}: {@code LISTEN_PORT TARGET_HOST:TARGET_PORT DELAY_MS}, repeatable, runs until killed) and tests.
 */
public final class DelayProxy implements AutoCloseable {
    private static final byte[] END = new byte[0];

    private record Chunk(long due, byte[] bytes) {
    }

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final long delayNanos;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();

    private DelayProxy(ServerSocket server, InetSocketAddress target, Duration delay) {
        this.server = server;
        this.target = target;
        this.delayNanos = delay.toNanos();
        threads.execute(this::acceptLoop);
    }

    /** Listens on {@code host:port} (port 0: any free one) and relays each connection to {@code target}. */
    public static DelayProxy start(String host, int port, InetSocketAddress target, Duration delay) throws IOException {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("negative delay " + delay);
        }
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getByName(host), port));
        return new DelayProxy(s, target, delay);
    }

    public int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            threads.execute(() -> connect(client));
        }
    }

    private void connect(Socket client) {
        Socket upstream = new Socket();
        try {
            open.add(client);
            open.add(upstream);
            client.setTcpNoDelay(true);
            upstream.setTcpNoDelay(true);
            upstream.connect(target, 5_000);
        } catch (IOException e) {
            closeQuietly(client);
            closeQuietly(upstream);
            return;
        }
        java.util.concurrent.atomic.AtomicInteger directions = new java.util.concurrent.atomic.AtomicInteger(2);
        relay(client, upstream, directions);
        relay(upstream, client, directions);
    }

    /**
     * One direction: a reader stamps each chunk with when it may leave, a writer sends it then; an end read is passed
     * on as a half close, and the sockets close when both directions have ended.
     */
    private void relay(Socket from, Socket to, java.util.concurrent.atomic.AtomicInteger directions) {
        BlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        threads.execute(() -> {
            byte[] buf = new byte[64 * 1024];
            try {
                InputStream in = from.getInputStream(); // not closed here: that would close the socket both ways
                int n;
                while ((n = in.read(buf)) > 0) {
                    queue.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buf, n)));
                }
            } catch (IOException e) {
                // the connection went: what was read still leaves, then the other side is closed
            }
            queue.add(new Chunk(System.nanoTime() + delayNanos, END));
        });
        threads.execute(() -> {
            try {
                OutputStream out = to.getOutputStream();
                while (true) {
                    Chunk c = queue.take();
                    long wait;
                    while ((wait = c.due - System.nanoTime()) > 0) {
                        LockSupport.parkNanos(wait);
                    }
                    if (c.bytes == END) {
                        to.shutdownOutput();
                        if (directions.decrementAndGet() == 0) {
                            closeQuietly(from);
                            closeQuietly(to);
                        }
                        return;
                    }
                    out.write(c.bytes);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                closeQuietly(from);
                closeQuietly(to);
            }
        });
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        for (Socket s : open) {
            closeQuietly(s);
        }
        threads.shutdownNow();
    }

    /** {@code LISTEN_PORT TARGET_HOST:TARGET_PORT DELAY_MS} (repeatable): relays on 127.0.0.1 until killed. */
    public static void main(String[] args) throws Exception {
        if (args.length == 0 || args.length % 3 != 0) {
            System.err.println("usage: DelayProxy LISTEN_PORT TARGET_HOST:TARGET_PORT DELAY_MS [...]");
            System.exit(2);
        }
        List<DelayProxy> proxies = new ArrayList<>();
        for (int i = 0; i < args.length; i += 3) {
            String[] hp = args[i + 1].split(":");
            proxies.add(start("127.0.0.1", Integer.parseInt(args[i]), new InetSocketAddress(hp[0], Integer.parseInt(hp[1])),
                    Duration.ofNanos((long) (Double.parseDouble(args[i + 2]) * 1e6))));
            System.out.println("127.0.0.1:" + proxies.getLast().port() + " -> " + args[i + 1] + " (" + args[i + 2] + " ms each way)");
        }
        Thread.currentThread().join();
    }
}
