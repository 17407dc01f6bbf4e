package ml.juno.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code juno node}: one node process serving one shard over gRPC (what systemd and compose start). */
@Command(name = "node", mixinStandardHelpOptions = true,
        description = "Start one node process (gRPC + health on one port); it starts empty and loads its shard when the coordinator asks.")
final class NodeCommand implements Callable<Integer> {

    @Option(names = "--port", defaultValue = "${env:JUNO_NODE_PORT:-19092}", description = "Port for gRPC, health and metrics (default: ${DEFAULT-VALUE}, env JUNO_NODE_PORT).")
    int port;

    @Option(names = "--node-id", defaultValue = "${env:JUNO_NODE_ID:-node}", description = "Name reported in status and logs (default: ${DEFAULT-VALUE}).")
    String nodeId;

    @Option(names = "--host", defaultValue = "${env:JUNO_NODE_HOST:-0.0.0.0}", description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String host;

    @Option(names = "--models-dir", defaultValue = "${env:JUNO_MODELS_DIR}", paramLabel = "DIR",
            description = "The folder this node opens model files from; LoadShard for a path outside it is refused "
                    + "(default: env JUNO_MODELS_DIR, else the models/ folder of this installation).")
    java.nio.file.Path modelsDir;

    @Option(names = "--tls-dir", defaultValue = "${env:JUNO_TLS_DIR}", paramLabel = "DIR",
            description = "Mutual TLS: serve with DIR/<node-id>.pem (or node.pem) and accept only clients with a certificate from DIR/ca.pem "
                    + "(juno certs; env JUNO_TLS_DIR).")
    java.nio.file.Path tlsDir;

    @Option(names = "--join", defaultValue = "${env:JUNO_JOIN}", paramLabel = "URL",
            description = "Join the cluster of the coordinator at URL (its API, e.g. http://coordinator:8080; one started with --min-nodes): "
                    + "announce this node there every few seconds and leave when stopped. A coordinator with API keys wants one in env JUNO_NODE_JOIN_KEY (env JUNO_JOIN).")
    String join;

    @Option(names = "--advertise", defaultValue = "${env:JUNO_ADVERTISE}", paramLabel = "HOST:PORT",
            description = "With --join: where the coordinator and the other nodes reach this node (default: the address its announcements come from, on --port; env JUNO_ADVERTISE).")
    String advertise;

    @Mixin
    BackendOption backend = new BackendOption();

    @Mixin
    ExpertCacheOption expertCache = new ExpertCacheOption();

    @Mixin
    VerboseOption verbose = new VerboseOption();

    @Mixin
    LoraPlayOption lora = new LoraPlayOption();

    @Override
    public Integer call() {
        Map<String, String> props = properties();
        return AppProcess.runForeground(JunoHome.requireApp(JunoHome.detect().nodeApp()), props);
    }

    /** The system properties the node app is started with. */
    Map<String, String> properties() {
        if (port < 1 || port > 65535) {
            throw new CliException("--port must be in 1..65535, got " + port);
        }
        Map<String, String> props = new LinkedHashMap<>();
        props.put("quarkus.http.port", Integer.toString(port));
        props.put("quarkus.http.host", host);
        props.put("juno.node.id", nodeId);
        java.nio.file.Path dir = modelsDir != null ? modelsDir : JunoHome.detect().root().resolve("models");
        if (modelsDir != null && !java.nio.file.Files.isDirectory(dir)) {
            throw new CliException("--models-dir " + dir + " is not a directory");
        }
        props.put("juno.node.models-dir", dir.toAbsolutePath().toString());
        if (join != null && !join.isBlank()) {
            java.net.URI uri;
            try {
                uri = java.net.URI.create(join.strip());
            } catch (IllegalArgumentException e) {
                throw new CliException("--join '" + join + "' is not a URL: " + e.getMessage());
            }
            if (uri.getHost() == null || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
                throw new CliException("--join wants the coordinator's URL, like http://coordinator:8080, not '" + join + "'");
            }
            props.put("juno.node.join", join.strip());
        }
        if (advertise != null && !advertise.isBlank()) {
            if (join == null || join.isBlank()) {
                throw new CliException("--advertise is where the coordinator reaches this node: it needs --join");
            }
            try {
                ml.juno.coordinator.cluster.NodeAddress.parse(advertise.strip());
            } catch (IllegalArgumentException e) {
                throw new CliException("--advertise: " + e.getMessage());
            }
            props.put("juno.node.advertise", advertise.strip());
        }
        props.putAll(backend.properties());
        if (tlsDir != null) {
            try {
                props.putAll(ml.juno.coordinator.tls.TlsDir.nodeProperties(tlsDir.toAbsolutePath(), nodeId, port));
            } catch (java.io.IOException e) {
                throw new CliException(e.getMessage());
            }
        }
        props.putAll(expertCache.properties());
        props.putAll(verbose.properties());
        String play = lora.property();
        if (play != null) {
            props.put("juno.node.lora-play", play); // added to whatever the coordinator asks this node to play
        }
        return props;
    }
}
