package ml.juno.cli;

import java.util.Map;
import picocli.CommandLine.Option;

/**
 * {@code --verbose}: trace-level logs of the engine and the cluster (each step's plan and time, each hop to a node and
 * what the node computed) on the terminal. A picocli mixin of the server commands; nodes started by
 * {@code juno cluster} get it too, and the cluster's coordinator log is then copied to the terminal as well.
 */
final class VerboseOption {

    /** The application property that lowers Juno's log categories to TRACE (the apps are built with min-level TRACE). */
    static final Map<String, String> TRACE = Map.of("quarkus.log.category.\"ml.juno\".level", "TRACE");

    @Option(names = "--verbose", description = "Trace-level logs of the engine and cluster on the terminal: step plans, hops, timings.")
    boolean verbose;

    Map<String, String> properties() {
        return verbose ? TRACE : Map.of();
    }
}
