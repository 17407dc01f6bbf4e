package ml.juno.e2e.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Packaged node apps started as real processes, in parallel, each on its own free port; closed together. */
public final class NodeProcesses implements AutoCloseable {
    private final List<AppLauncher> nodes;
    private final String prefix;

    private NodeProcesses(String prefix, List<AppLauncher> nodes) {
        this.prefix = prefix;
        this.nodes = nodes;
    }

    /** Starts {@code n} nodes (one compute thread each is the coordinator's choice, not theirs). */
    public static NodeProcesses start(String prefix, int n) {
        return start(prefix, n, Map.of());
    }

    /** Starts {@code n} nodes with extra system properties (the ones {@code juno node}'s options set). */
    public static NodeProcesses start(String prefix, int n, Map<String, String> properties) {
        List<CompletableFuture<AppLauncher>> starting = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String id = prefix + "-" + i;
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    Map<String, String> props = new java.util.HashMap<>(properties);
                    props.put("juno.node.id", id);
                    return AppLauncher.start(id, AppLauncher.nodeApp(), props, Duration.ofSeconds(90));
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }));
        }
        List<AppLauncher> started = new ArrayList<>();
        RuntimeException failure = null;
        for (CompletableFuture<AppLauncher> f : starting) {
            try {
                started.add(f.join());
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        NodeProcesses p = new NodeProcesses(prefix, started);
        if (failure != null) {
            p.close();
            throw failure;
        }
        return p;
    }

    /** Node {@code i}'s id ({@code juno.node.id}), as it was started with. */
    public String id(int i) {
        return prefix + "-" + i;
    }

    public AppLauncher get(int i) {
        return nodes.get(i);
    }

    public int size() {
        return nodes.size();
    }

    /** {@code 127.0.0.1:port} of the first {@code k} nodes. */
    public List<String> addresses(int k) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < k; i++) {
            out.add("127.0.0.1:" + nodes.get(i).port());
        }
        return out;
    }

    @Override
    public void close() {
        for (AppLauncher n : nodes) {
            n.close();
        }
    }
}
