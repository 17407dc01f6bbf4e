package ml.juno.cli;

import java.util.Map;
import ml.juno.coordinator.cluster.Parallelism;
import ml.juno.model.wire.ActivationDtype;
import ml.juno.model.wire.ProtoMapping;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** How a coordinator splits the model over its nodes: {@code --pType}, {@code --dtype}, {@code --byteOrder}. */
final class ClusterOptions {

    @Mixin
    LoraPlayOption lora = new LoraPlayOption();

    @Mixin
    LoraModulesOption loraModules = new LoraModulesOption();


    @Option(names = "--pType", defaultValue = "${env:PTYPE:-pipeline}", description = "pipeline or tensor (default: ${DEFAULT-VALUE}, env PTYPE).")
    String parallelism;

    @Option(names = "--dtype", defaultValue = "${env:DTYPE:-FLOAT16}", description = "Activations on the wire: FLOAT16, INT8 or FLOAT32 (default: ${DEFAULT-VALUE}, env DTYPE).")
    String dtype;

    @Option(names = "--byteOrder", defaultValue = "${env:BYTE_ORDER:-LITTLE_ENDIAN}", description = "LITTLE_ENDIAN (LE) or BIG_ENDIAN (BE) (default: ${DEFAULT-VALUE}, env BYTE_ORDER).")
    String byteOrder;

    @Option(names = "--step-timeout", defaultValue = "60s", description = "Deadline of one forward step over all nodes (default: ${DEFAULT-VALUE}).")
    String stepTimeout;

    @Option(names = "--threads-per-node", defaultValue = "0", description = "Compute threads per node; 0 = all its cores (default).")
    int threadsPerNode;

    @Option(names = "--tls-dir", defaultValue = "${env:JUNO_TLS_DIR}", paramLabel = "DIR",
            description = "Mutual TLS with the nodes, from the folder juno certs wrote (env JUNO_TLS_DIR).")
    java.nio.file.Path tlsDir;

    /** A TLS folder with the coordinator's files, absolute; a clear error otherwise. */
    static java.nio.file.Path tlsDir(java.nio.file.Path dir) {
        for (String f : new String[] {"ca.pem", "coordinator.pem", "coordinator-key.pem"}) {
            if (!java.nio.file.Files.isReadable(dir.resolve(f))) {
                throw new CliException("--tls-dir " + dir + " lacks a readable " + f + " (make it with: juno certs --out " + dir + ")");
            }
        }
        return dir.toAbsolutePath();
    }

    /** {@code --byteOrder} spelled out: BE and LE (the old command line's short forms) as BIG_ENDIAN and LITTLE_ENDIAN. */
    String byteOrder() {
        String o = byteOrder.strip().toUpperCase(java.util.Locale.ROOT);
        return switch (o) {
            case "BE" -> "BIG_ENDIAN";
            case "LE" -> "LITTLE_ENDIAN";
            default -> o;
        };
    }

    /** The coordinator's {@code juno.cluster.*} properties for {@code nodes} (null: none fixed); bad values are a clear error. */
    Map<String, String> properties(String nodes) {
        try {
            Parallelism p = Parallelism.parse(parallelism);
            ActivationDtype d = ActivationDtype.parse(dtype);
            String order = byteOrder();
            ProtoMapping.parseByteOrder(order);
            if (threadsPerNode < 0) {
                throw new IllegalArgumentException("--threads-per-node must be >= 0");
            }
            java.time.Duration.parse("PT" + stepTimeout.toUpperCase());
            java.util.Map<String, String> props = new java.util.LinkedHashMap<>();
            if (nodes != null) { // null: the nodes join by themselves (juno coordinator --min-nodes)
                props.put("juno.cluster.nodes", nodes);
            }
            props.putAll(Map.of("juno.cluster.parallelism", p.name().toLowerCase(),
                    "juno.cluster.dtype", d.name(), "juno.cluster.byte-order", order,
                    "juno.cluster.step-timeout", stepTimeout, "juno.cluster.threads-per-node", Integer.toString(threadsPerNode)));
            if (tlsDir != null) {
                props.put("juno.cluster.tls-dir", tlsDir(tlsDir).toString());
            }
            String play = lora.property();
            if (play != null) {
                props.put("juno.lora-play", play); // each node plays its part of every adapter
            }
            String modules = loraModules.modulesProperty();
            if (modules != null) {
                props.put("juno.lora-modules", modules);
            }
            return props;
        } catch (IllegalArgumentException e) {
            throw new CliException(e.getMessage());
        } catch (java.time.format.DateTimeParseException e) {
            throw new CliException("--step-timeout '" + stepTimeout + "' is not a duration like 30s or 2m");
        }
    }
}
