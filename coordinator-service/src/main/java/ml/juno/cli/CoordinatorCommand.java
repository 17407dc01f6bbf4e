package ml.juno.cli;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import ml.juno.coordinator.cluster.NodeAddress;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code juno coordinator}: the coordinator alone (API, tokenizer, scheduler) computing on nodes that already run
 * ({@code juno node}); it loads each node's shard when it starts and again when a node comes back.
 */
@Command(name = "coordinator", mixinStandardHelpOptions = true,
        description = "Run the coordinator against running nodes (juno node): OpenAI API over a pipeline or tensor-parallel cluster.")
final class CoordinatorCommand implements Callable<Integer> {

    @Mixin
    ModelOption model = new ModelOption();

    @Mixin
    ClusterOptions cluster = new ClusterOptions();

    @Mixin
    GenerationDefaults generation = new GenerationDefaults();

    @Mixin
    VerboseOption verbose = new VerboseOption();

    @Mixin
    ApiAccessOptions access = new ApiAccessOptions();

    @Mixin
    DrainOption drain = new DrainOption();

    @Option(names = "--nodes", paramLabel = "HOST:PORT,…", description = "The nodes, in pipeline (rank) order (or --min-nodes).")
    String nodes;

    @Option(names = "--min-nodes", paramLabel = "N",
            description = "Instead of --nodes: nodes join by themselves (juno node --join http://THIS-HOST:API-PORT); serve once N have joined, "
                    + "and reload the shards over the members whenever one joins or leaves (ranks ordered by node id, then address).")
    Integer minNodes;

    @Option(names = "--node-lease", defaultValue = "10s", paramLabel = "DURATION",
            description = "With --min-nodes: a joined node that has not announced itself for this long has left (default: ${DEFAULT-VALUE}).")
    String nodeLease;

    @Option(names = "--api-port", defaultValue = "${env:JUNO_API_PORT:-${env:API_PORT:-8080}}", description = "HTTP port of the API and console (default: ${DEFAULT-VALUE}).")
    int apiPort;

    @Option(names = "--host", defaultValue = "${env:JUNO_HOST:-127.0.0.1}", description = "Address the API listens on (default: ${DEFAULT-VALUE}, loopback only; 0.0.0.0 for every interface, then set API keys).")
    String host;

    @Option(names = "--max-sequences", description = "Sequences decoded together at most (default: the engine's).")
    Integer maxSequences;

    @Override
    public Integer call() {
        Map<String, String> props = properties(); // bad options first, before looking for the app
        return AppProcess.runForeground(JunoHome.requireApp(JunoHome.detect().coordinatorApp()), props, java.util.List.of(), access.environment());
    }

    Map<String, String> properties() {
        if ((nodes == null) == (minNodes == null)) {
            throw new CliException("give the nodes with --nodes HOST:PORT,… or let them join with --min-nodes N (juno node --join), one of the two");
        }
        if (nodes != null) {
            try {
                NodeAddress.parseList(nodes);
            } catch (IllegalArgumentException e) {
                throw new CliException("--nodes: " + e.getMessage());
            }
        } else if (minNodes < 1 || minNodes > 64) {
            throw new CliException("--min-nodes must be in 1..64, got " + minNodes);
        }
        try {
            if (java.time.Duration.parse("PT" + nodeLease.toUpperCase(java.util.Locale.ROOT)).toMillis() < 1000) {
                throw new CliException("--node-lease must be at least 1s, got " + nodeLease);
            }
        } catch (java.time.format.DateTimeParseException e) {
            throw new CliException("--node-lease '" + nodeLease + "' is not a duration like 10s or 1m");
        }
        if (apiPort < 1 || apiPort > 65535) {
            throw new CliException("--api-port must be in 1..65535, got " + apiPort);
        }
        Map<String, String> props = new LinkedHashMap<>();
        props.put("juno.model-path", model.resolve().toAbsolutePath().toString());
        props.put("quarkus.http.port", Integer.toString(apiPort));
        props.put("quarkus.http.host", host);
        if (maxSequences != null) {
            if (maxSequences < 1) {
                throw new CliException("--max-sequences must be >= 1, got " + maxSequences);
            }
            props.put("juno.max-sequences", maxSequences.toString());
        }
        props.putAll(cluster.properties(nodes));
        if (nodes == null) {
            props.put("juno.cluster.min-nodes", minNodes.toString());
            props.put("juno.cluster.node-lease", nodeLease);
        }
        props.putAll(generation.properties());
        props.putAll(verbose.properties());
        props.putAll(access.properties());
        props.putAll(drain.properties());
        return props;
    }
}
