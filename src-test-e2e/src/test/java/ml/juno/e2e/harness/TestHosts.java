package ml.juno.e2e.harness;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Hosts of the project's own for multi-host tests: each one a Linux network namespace ({@code jue2e-hI}) whose veth
 * ({@code jue2e-pI}, address {@code 10.77.0.(10+I)/24}) is plugged into a bridge in the root namespace
 * ({@code jue2e-br}, {@code 10.77.0.1/24}, where the test and the coordinator run). {@link #cut} takes a host's link
 * down, {@link #restore} brings it back, {@link #delay} puts {@code tc netem} delay on every host's link.
 *
 * <p>Making namespaces needs root and iproute2; where either is missing, or a step fails, {@link #create} says why
 * ({@link #fallbackReason()}) and gives loopback hosts instead: every host is {@code 127.0.0.1}, and cutting a
 * host's link freezes its process (SIGSTOP), which a peer sees the same way: no answer, no reset.
 *
 * <p>Two test JVMs on one machine take turns through a file lock; the holder first removes what a crashed run left
 * (every namespace and link named {@code jue2e-*}). {@link #close} removes everything again, and a shutdown hook does
 * it if the JVM exits first.
 */
public final class TestHosts implements AutoCloseable {
    public static final String PREFIX = "jue2e-";
    static final String BRIDGE = PREFIX + "br";
    static final String SUBNET = "10.77.0.";
    static final Path LOCK = Path.of(System.getProperty("java.io.tmpdir"), "juno-e2e-netns.lock");
    static final Duration LOCK_WAIT = Duration.ofMinutes(3);

    private final int count;
    private final String fallbackReason; // null: namespaces
    private final FileChannel lockFile;
    private final FileLock lock;
    private final Thread cleanupHook;

    private TestHosts(int count, String fallbackReason, FileChannel lockFile, FileLock lock) {
        this.count = count;
        this.fallbackReason = fallbackReason;
        this.lockFile = lockFile;
        this.lock = lock;
        this.cleanupHook = fallbackReason == null ? new Thread(TestHosts::removeAll, "juno-e2e-netns-cleanup") : null;
        if (cleanupHook != null) {
            Runtime.getRuntime().addShutdownHook(cleanupHook);
        }
    }

    /**
     * {@code count} hosts in namespaces, or on loopback where namespaces cannot be made here (the reason is logged);
     * {@code -Djuno.e2e.hosts=loopback} asks for loopback.
     */
    public static TestHosts create(int count) throws IOException, InterruptedException {
        if (count < 1 || count > 100) {
            throw new IllegalArgumentException("1..100 hosts, not " + count);
        }
        String reason = "loopback".equals(System.getProperty("juno.e2e.hosts")) ? "-Djuno.e2e.hosts=loopback" : cannotMakeNamespaces();
        if (reason != null) {
            return loopback(count, reason);
        }
        FileChannel ch = FileChannel.open(LOCK, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock = null;
        long deadline = System.nanoTime() + LOCK_WAIT.toNanos();
        while (lock == null && System.nanoTime() < deadline) {
            lock = ch.tryLock();
            if (lock == null) {
                Thread.sleep(500);
            }
        }
        if (lock == null) {
            ch.close();
            return loopback(count, "another test run held " + LOCK + " for " + LOCK_WAIT);
        }
        try {
            removeAll(); // a crashed run's leftovers; nobody else may own jue2e-* while we hold the lock
            String busy = ip("-4", "-o", "addr", "show").out().lines().filter(l -> l.contains(" " + SUBNET)).findFirst().orElse(null);
            if (busy != null) {
                throw new IllegalStateException(SUBNET + "0/24 is already in use on this machine: " + busy.strip());
            }
            must(ip("link", "add", BRIDGE, "type", "bridge"));
            must(ip("addr", "add", SUBNET + "1/24", "dev", BRIDGE));
            must(ip("link", "set", BRIDGE, "up"));
            for (int i = 0; i < count; i++) {
                String ns = namespace(i);
                must(ip("netns", "add", ns));
                must(ip("link", "add", PREFIX + "v" + i, "type", "veth", "peer", "name", PREFIX + "p" + i, "netns", ns));
                must(ip("link", "set", PREFIX + "v" + i, "master", BRIDGE, "up"));
                must(ip("-n", ns, "addr", "add", hostAddress(i) + "/24", "dev", PREFIX + "p" + i));
                must(ip("-n", ns, "link", "set", PREFIX + "p" + i, "up"));
                must(ip("-n", ns, "link", "set", "lo", "up"));
            }
        } catch (IllegalStateException | IOException e) {
            removeAll();
            lock.release();
            ch.close();
            return loopback(count, "setting up network namespaces failed: " + e.getMessage());
        }
        System.out.println("[hosts] " + count + " network namespaces " + PREFIX + "h0.. on " + SUBNET + "10.." + " behind bridge " + BRIDGE
                + " (" + SUBNET + "1)");
        return new TestHosts(count, null, ch, lock);
    }

    private static TestHosts loopback(int count, String reason) {
        System.out.println("[hosts] no network namespaces (" + reason + "): the multi-host checks run over loopback, a cut link is a SIGSTOPped node");
        return new TestHosts(count, reason, null, null);
    }

    /** Why this machine cannot make namespaces, or null. */
    private static String cannotMakeNamespaces() throws InterruptedException {
        try {
            Shell.Result id = Shell.run(List.of("id", "-u"), Path.of("."), Map.of(), Duration.ofSeconds(10));
            if (!id.out().strip().equals("0")) {
                return "not root (uid " + id.out().strip() + ")";
            }
            Shell.Result v = ip("-V");
            if (v.exitCode() != 0) {
                return "ip -V failed: " + v.err().strip();
            }
            return null;
        } catch (IOException e) {
            return "no iproute2 'ip' command (" + e.getMessage() + ")";
        }
    }

    static String namespace(int i) {
        return PREFIX + "h" + i;
    }

    static String hostAddress(int i) {
        return SUBNET + (10 + i);
    }

    /** True when the hosts are network namespaces; false on the loopback fallback. */
    public boolean namespaces() {
        return fallbackReason == null;
    }

    /** Why the hosts are loopback ones; null with namespaces. */
    public String fallbackReason() {
        return fallbackReason;
    }

    public int count() {
        return count;
    }

    /** The address host {@code i} is reached at (and its servers listen on). */
    public String address(int i) {
        check(i);
        return namespaces() ? hostAddress(i) : "127.0.0.1";
    }

    /** The address the hosts reach the root namespace at (the bridge), where the test's coordinator runs; loopback without namespaces. */
    public String rootAddress() {
        return namespaces() ? SUBNET + "1" : "127.0.0.1";
    }

    /** A port for a server on host {@code i}: each namespace has its own ports, so every node may use the default one. */
    public int port(int i, int defaultPort) {
        check(i);
        return namespaces() ? defaultPort : AppLauncher.freePort();
    }

    /** {@code cmd} run on host {@code i}: inside its namespace ({@code ip netns exec} execs it, so its pid is the command's). */
    public List<String> on(int i, List<String> cmd) {
        check(i);
        if (!namespaces()) {
            return cmd;
        }
        List<String> out = new ArrayList<>(List.of("ip", "netns", "exec", namespace(i)));
        out.addAll(cmd);
        return out;
    }

    /** Takes host {@code i}'s link down (its veth at the bridge), or freezes {@code process} on loopback. */
    public void cut(int i, Process process) throws IOException, InterruptedException {
        check(i);
        if (namespaces()) {
            must(ip("link", "set", PREFIX + "v" + i, "down"));
        } else {
            must(Shell.run(List.of("kill", "-STOP", Long.toString(process.pid())), Path.of("."), Map.of(), Duration.ofSeconds(10)));
        }
    }

    /** Brings host {@code i}'s link back up, or resumes {@code process} on loopback. */
    public void restore(int i, Process process) throws IOException, InterruptedException {
        check(i);
        if (namespaces()) {
            must(ip("link", "set", PREFIX + "v" + i, "up"));
        } else {
            must(Shell.run(List.of("kill", "-CONT", Long.toString(process.pid())), Path.of("."), Map.of(), Duration.ofSeconds(10)));
        }
    }

    /**
     * {@code tc qdisc … netem delay} on every host's own link (so each direction of a host's traffic is delayed once);
     * null when done, else why not (loopback, or a kernel without netem).
     */
    public String delay(Duration oneWay) throws IOException, InterruptedException {
        if (!namespaces()) {
            return "no namespaces: " + fallbackReason;
        }
        String ms = (oneWay.toNanos() / 1000) + "us";
        for (int i = 0; i < count; i++) {
            for (List<String> link : List.of(List.of("-n", namespace(i), "dev", PREFIX + "p" + i), List.of("dev", PREFIX + "v" + i))) {
                List<String> cmd = new ArrayList<>(List.of("tc"));
                if (link.get(0).equals("-n")) {
                    cmd.addAll(link.subList(0, 2));
                }
                cmd.addAll(List.of("qdisc", "replace", "dev", link.get(link.size() - 1), "root", "netem", "delay", ms));
                Shell.Result r = Shell.run(cmd, Path.of("."), Map.of(), Duration.ofSeconds(10));
                if (r.exitCode() != 0) {
                    return String.join(" ", cmd) + ": " + r.err().strip();
                }
            }
        }
        return null;
    }

    private void check(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("host " + i + " of " + count);
        }
    }

    static Shell.Result ip(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        return Shell.run(cmd, Path.of("."), Map.of(), Duration.ofSeconds(20));
    }

    private static void must(Shell.Result r) {
        if (r.exitCode() != 0) {
            throw new IllegalStateException(r.describe().strip());
        }
    }

    /** Deletes every namespace and link named jue2e-* (a namespace takes its veth ends with it). */
    static void removeAll() {
        try {
            for (String line : ip("netns", "list").out().lines().toList()) {
                String name = line.strip().split("\\s+")[0];
                if (name.startsWith(PREFIX)) {
                    ip("netns", "del", name);
                }
            }
            for (String line : ip("-o", "link", "show").out().lines().toList()) {
                String[] f = line.split(":\\s+", 3); // "7: jue2e-v0@if2: <…>"
                if (f.length > 1) {
                    String name = f[1].split("@")[0];
                    if (name.startsWith(PREFIX)) {
                        ip("link", "del", name);
                    }
                }
            }
        } catch (IOException e) {
            System.out.println("[hosts] cleanup failed: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        if (!namespaces()) {
            return;
        }
        removeAll();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanupHook);
        } catch (IllegalStateException exiting) {
            // the JVM is shutting down: the hook runs anyway
        }
        try {
            lock.release();
            lockFile.close();
        } catch (IOException e) {
            System.out.println("[hosts] releasing " + LOCK + ": " + e.getMessage());
        }
    }
}
