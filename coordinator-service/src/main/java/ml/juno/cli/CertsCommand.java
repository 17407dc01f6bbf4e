package ml.juno.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import ml.juno.coordinator.tls.ClusterCertificates;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code juno certs}: a private CA and certificates for a coordinator and its nodes (mutual TLS, {@code --tls-dir}). */
@Command(name = "certs", mixinStandardHelpOptions = true,
        description = "Make a CA and certificates for the coordinator and N nodes (mutual TLS between them; use the folder as --tls-dir).")
final class CertsCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = "--out", required = true, paramLabel = "DIR", description = "Folder to write ca.pem, coordinator.pem, node-N.pem and their keys (mode 0600) into.")
    Path out;

    @Option(names = "--nodes", defaultValue = "3", description = "Node certificates to make: node-0 … node-(N-1) (default: ${DEFAULT-VALUE}).")
    int nodes;

    @Option(names = "--host", paramLabel = "NAME|IP", split = ",", description = "Host names or addresses the certificates are valid for, besides localhost and 127.0.0.1 (repeatable, comma-separated).")
    List<String> hosts = List.of();

    @Option(names = "--days", defaultValue = "825", description = "Validity in days (default: ${DEFAULT-VALUE}).")
    int days;

    @Override
    public Integer call() throws IOException {
        if (nodes < 0 || nodes > 1024) {
            throw new CliException("--nodes must be in 0..1024, got " + nodes);
        }
        if (days < 1 || days > 36500) {
            throw new CliException("--days must be in 1..36500, got " + days);
        }
        List<Path> files;
        try {
            files = ClusterCertificates.write(out, nodes, hosts, Duration.ofDays(days));
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        }
        spec.commandLine().getOut().println("Wrote " + files.size() + " files to " + out.toAbsolutePath()
                + " (keys readable by their owner only). Nodes: juno node --tls-dir " + out + " --node-id node-N; coordinator: --tls-dir " + out);
        return 0;
    }
}
