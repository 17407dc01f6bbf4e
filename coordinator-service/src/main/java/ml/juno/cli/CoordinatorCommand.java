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

    @Option(names = "--nodes", required = true, paramLabel = "HOST:PORT,…", description = "The nodes, in pipeline (rank) order.")
    String nodes;

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
        try {
            NodeAddress.parseList(nodes);
        } catch (IllegalArgumentException e) {
            throw new CliException("--nodes: " + e.getMessage());
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
        props.putAll(generation.properties());
        props.putAll(verbose.properties());
        props.putAll(access.properties());
        props.putAll(drain.properties());
        return props;
    }
}
