package ml.juno.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import ml.juno.coordinator.tls.TlsDir;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CertsCommandTest {

    static X509Certificate cert(Path p) throws Exception {
        try (InputStream in = Files.newInputStream(p)) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    @Test
    void certs_makesACaAndLeafCertificatesSignedByIt_keysOwnerOnly(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("tls");
        StringWriter out = new StringWriter();
        int rc = Juno.execute(new String[] {"certs", "--out", dir.toString(), "--nodes", "2", "--host", "node1.internal,10.0.0.5"},
                new PrintWriter(out, true), new PrintWriter(new StringWriter(), true));
        assertEquals(0, rc, out.toString());
        X509Certificate ca = cert(dir.resolve("ca.pem"));
        assertTrue(ca.getBasicConstraints() >= 0, "the CA may sign");
        for (String name : List.of("coordinator", "node-0", "node-1")) {
            X509Certificate c = cert(dir.resolve(name + ".pem"));
            c.verify(ca.getPublicKey());
            c.checkValidity();
            assertEquals(-1, c.getBasicConstraints(), name + " is no CA");
            assertTrue(c.getExtendedKeyUsage().containsAll(List.of("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2")), name + ": server and client");
            String sans = c.getSubjectAlternativeNames().toString();
            assertTrue(sans.contains("localhost") && sans.contains("127.0.0.1") && sans.contains("node1.internal") && sans.contains("10.0.0.5"), sans);
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(name + "-key.pem"))));
            assertTrue(Files.readString(dir.resolve(name + "-key.pem")).startsWith("-----BEGIN PRIVATE KEY-----"), "PKCS#8");
        }
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("ca-key.pem"))));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));

        Map<String, String> node = TlsDir.nodeProperties(dir, "node-1", 19100);
        assertEquals(dir.resolve("node-1.pem").toString(), node.get("quarkus.tls.juno.key-store.pem.0.cert"));
        assertEquals("disabled", node.get("quarkus.http.insecure-requests"));
        assertEquals("19100", node.get("quarkus.http.ssl-port"));
        assertTrue(TlsDir.coordinatorCredentials(dir) != null);
        assertThrows(java.io.IOException.class, () -> TlsDir.coordinatorCredentials(tmp));
    }

    @Test
    void node_andCoordinator_takeTheTlsDir_badFoldersAreOneLineErrors(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("tls");
        assertEquals(0, Juno.execute(new String[] {"certs", "--out", dir.toString(), "--nodes", "1"}, new PrintWriter(new StringWriter()),
                new PrintWriter(new StringWriter())));
        NodeCommand n = new NodeCommand();
        new picocli.CommandLine(n).parseArgs("--port", "19200", "--node-id", "node-0", "--tls-dir", dir.toString(), "--models-dir", tmp.toString());
        Map<String, String> p = n.properties();
        assertEquals("19200", p.get("quarkus.http.ssl-port"));
        assertEquals(dir.toAbsolutePath().resolve("ca.pem").toString(), p.get("quarkus.tls.juno.trust-store.pem.certs"));
        NodeCommand bad = new NodeCommand();
        new picocli.CommandLine(bad).parseArgs("--tls-dir", tmp.resolve("none").toString(), "--models-dir", tmp.toString());
        assertTrue(assertThrows(CliException.class, bad::properties).getMessage().contains("juno certs --out"));
        StringWriter err = new StringWriter();
        String model = Path.of(System.getProperty("juno.models.dir"), "stories260K.gguf").toString();
        assertEquals(1, Juno.execute(new String[] {"coordinator", "-m", model, "--nodes", "a:1", "--tls-dir", tmp.toString()},
                new PrintWriter(new StringWriter()), new PrintWriter(err, true)));
        assertTrue(err.toString().contains("lacks a readable ca.pem"), err.toString());
    }
}
