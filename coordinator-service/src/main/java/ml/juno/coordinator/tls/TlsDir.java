package ml.juno.coordinator.tls;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The files of a {@code --tls-dir} (what {@code juno certs} writes): {@code ca.pem} (the CA every peer must chain to),
 * {@code coordinator.pem}/{@code coordinator-key.pem}, and {@code NAME.pem}/{@code NAME-key.pem} per node.
 */
public final class TlsDir {

    public static final String CA = "ca.pem";

    private TlsDir() {
    }

    /** The coordinator's gRPC credentials: its certificate as client, and only servers chaining to the CA trusted. */
    public static ChannelCredentials coordinatorCredentials(Path dir) throws IOException {
        Path cert = require(dir, "coordinator.pem");
        Path key = require(dir, "coordinator-key.pem");
        Path ca = require(dir, CA);
        return TlsChannelCredentials.newBuilder().keyManager(cert.toFile(), key.toFile()).trustManager(ca.toFile()).build();
    }

    /**
     * A node's Quarkus settings: HTTPS and gRPC on {@code port} only (no plaintext listener), its certificate
     * {@code NAME.pem} (or {@code node.pem}), and every client required to present a certificate from the CA.
     */
    public static Map<String, String> nodeProperties(Path dir, String name, int port) throws IOException {
        Path cert = dir.resolve(name + ".pem");
        Path key = dir.resolve(name + "-key.pem");
        if (!Files.isRegularFile(cert)) {
            cert = dir.resolve("node.pem");
            key = dir.resolve("node-key.pem");
        }
        require(dir, cert.getFileName().toString());
        require(dir, key.getFileName().toString());
        Path ca = require(dir, CA);
        Map<String, String> p = new LinkedHashMap<>();
        p.put("quarkus.tls.juno.key-store.pem.0.cert", cert.toAbsolutePath().toString());
        p.put("quarkus.tls.juno.key-store.pem.0.key", key.toAbsolutePath().toString());
        p.put("quarkus.tls.juno.trust-store.pem.certs", ca.toAbsolutePath().toString());
        p.put("quarkus.http.tls-configuration-name", "juno");
        // client certificates are required by the node app's build (quarkus.http.ssl.client-auth=required)
        p.put("quarkus.http.insecure-requests", "disabled");
        p.put("quarkus.http.ssl-port", Integer.toString(port));
        return p;
    }

    private static Path require(Path dir, String file) throws IOException {
        Path p = dir.resolve(file);
        if (!Files.isRegularFile(p) || !Files.isReadable(p)) {
            throw new IOException("TLS folder " + dir + " lacks a readable " + file + " (make it with: juno certs --out " + dir + ")");
        }
        return p;
    }
}
