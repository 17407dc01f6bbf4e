package ml.juno.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.cluster.NodeAddress;

/**
 * The node processes of {@code juno bench --nodes N}: started as {@code juno cluster} starts them
 * ({@link ClusterCommand#nodeProperties}, {@link AppProcess#command}: loopback ports, plaintext, one log each), with
 * {@code --pin} each under {@code taskset} on a core of its own; stopped together on {@link #close}. Each node also
 * watches this process and exits if it disappears.
 */
final class BenchNodes implements AutoCloseable {
    private final List<Process> processes = new ArrayList<>();
    private final List<NodeAddress> addresses = new ArrayList<>();
    private final List<Path> logs = new ArrayList<>();

    /**
     * Starts {@code n} nodes; {@code cpus} (null: unpinned) gives node {@code i} its core. They load nothing until the
     * coordinator asks.
     */
    static BenchNodes start(Path nodeApp, int n, Map<String, String> nodeProps, Path modelsDir, Path logDir, List<Integer> cpus)
            throws IOException {
        BenchNodes nodes = new BenchNodes();
        try {
            for (int i = 0; i < n; i++) {
                int port = LoopbackPorts.pick(nodes.addresses.stream().mapToInt(NodeAddress::port).toArray());
                List<String> cmd = AppProcess.command(nodeApp, ClusterCommand.nodeProperties(i, port, nodeProps, modelsDir));
                if (cpus != null) {
                    cmd = CpuPinning.onCpu(cpus.get(i), cmd);
                }
                Path log = logDir.resolve("node-" + i + ".log");
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
                nodes.processes.add(p);
                nodes.addresses.add(new NodeAddress("127.0.0.1", port));
                nodes.logs.add(log);
            }
        } catch (IOException | RuntimeException e) {
            nodes.close();
            throw e;
        }
        return nodes;
    }

    List<NodeAddress> addresses() {
        return List.copyOf(addresses);
    }

    /** Why the cluster could not start, if a node process has exited: its exit code and last error line; else "". */
    String exited() {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < processes.size(); i++) {
            Process p = processes.get(i);
            if (!p.isAlive()) {
                b.append("; node-").append(i).append(" exited with ").append(p.exitValue()).append(lastError(logs.get(i)))
                        .append(" (see ").append(logs.get(i)).append(')');
            }
        }
        return b.toString();
    }

    private static String lastError(Path log) {
        try (var lines = Files.lines(log)) {
            return lines.filter(l -> l.contains("ERROR") || l.contains("FATAL") || l.contains("Exception")).reduce((a, b) -> b)
                    .map(l -> ": " + l.strip()).orElse("");
        } catch (IOException | java.io.UncheckedIOException e) {
            return "";
        }
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroy();
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
