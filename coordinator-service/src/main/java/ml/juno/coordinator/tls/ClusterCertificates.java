package ml.juno.coordinator.tls;

import java.io.IOException;
import java.io.StringWriter;
import java.io.Writer;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A private CA and the certificates of a cluster, with Bouncy Castle: EC P-256 keys, SHA-256 signatures; the CA may
 * only sign; the coordinator's and each node's certificate serve both as TLS server and client (each side verifies
 * the other), with the given host names and addresses (always {@code localhost} and {@code 127.0.0.1}) as subject
 * alternative names. Keys are written as PKCS#8 PEM with owner-only permissions (0600) in a 0700 folder; the CA key is
 * kept so more node certificates can be made later (or deleted: nothing at run time needs it).
 */
public final class ClusterCertificates {

    private static final SecureRandom RANDOM = new SecureRandom();

    private ClusterCertificates() {
    }

    /**
     * Writes {@code ca.pem}, {@code ca-key.pem}, {@code coordinator.pem}, {@code coordinator-key.pem} and
     * {@code node-I.pem}, {@code node-I-key.pem} for I in 0..nodes-1 into {@code dir}.
     *
     * @return the files written
     */
    public static List<Path> write(Path dir, int nodes, List<String> hosts, Duration validity) throws IOException {
        if (nodes < 0 || nodes > 1024) {
            throw new IllegalArgumentException("nodes must be in 0..1024, got " + nodes);
        }
        Files.createDirectories(dir);
        try {
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
        } catch (UnsupportedOperationException notPosix) {
            // the folder keeps the platform's permissions
        }
        try {
            KeyPair caKeys = keys();
            X500Name caName = new X500Name("CN=Juno cluster CA " + Long.toHexString(RANDOM.nextLong()));
            X509Certificate ca = ca(caName, caKeys, validity);
            List<Path> out = new ArrayList<>();
            out.add(pem(dir.resolve(TlsDir.CA), ca, false));
            out.add(pem(dir.resolve("ca-key.pem"), new JcaPKCS8Generator(caKeys.getPrivate(), null), true));
            out.addAll(leaf(dir, "coordinator", caName, caKeys, ca, hosts, validity));
            for (int i = 0; i < nodes; i++) {
                out.addAll(leaf(dir, "node-" + i, caName, caKeys, ca, hosts, validity));
            }
            return out;
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("cannot make certificates: " + e.getMessage(), e);
        }
    }

    private static List<Path> leaf(Path dir, String name, X500Name caName, KeyPair caKeys, X509Certificate ca, List<String> hosts,
                                   Duration validity) throws Exception {
        KeyPair k = keys();
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(caName, serial(), Date.from(now.minusSeconds(300)),
                Date.from(now.plus(validity)), new X500Name("CN=juno " + name), k.getPublic());
        JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
        b.addExtension(Extension.extendedKeyUsage, false,
                new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth}));
        b.addExtension(Extension.subjectAlternativeName, false, names(hosts));
        b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(ca));
        b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(k.getPublic()));
        X509Certificate cert = new JcaX509CertificateConverter().getCertificate(b.build(signer(caKeys)));
        cert.verify(ca.getPublicKey());
        return List.of(pem(dir.resolve(name + ".pem"), cert, false),
                pem(dir.resolve(name + "-key.pem"), new JcaPKCS8Generator(k.getPrivate(), null), true));
    }

    private static X509Certificate ca(X500Name name, KeyPair k, Duration validity) throws Exception {
        Instant now = Instant.now();
        X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(name, serial(), Date.from(now.minusSeconds(300)),
                Date.from(now.plus(validity)), name, k.getPublic());
        b.addExtension(Extension.basicConstraints, true, new BasicConstraints(0));
        b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
        b.addExtension(Extension.subjectKeyIdentifier, false, new JcaX509ExtensionUtils().createSubjectKeyIdentifier(k.getPublic()));
        return new JcaX509CertificateConverter().getCertificate(b.build(signer(k)));
    }

    private static GeneralNames names(List<String> hosts) throws IOException {
        List<GeneralName> names = new ArrayList<>();
        names.add(new GeneralName(GeneralName.dNSName, "localhost"));
        names.add(new GeneralName(GeneralName.iPAddress, "127.0.0.1"));
        for (String h : hosts) {
            String host = h.strip();
            if (host.isEmpty() || host.equals("localhost") || host.equals("127.0.0.1")) {
                continue;
            }
            boolean ip = host.matches("[0-9.]+") || host.contains(":");
            if (ip) {
                InetAddress.getByName(host); // refuses a malformed address
            } else if (!host.matches("[A-Za-z0-9*]([A-Za-z0-9.-]*[A-Za-z0-9])?")) {
                throw new IllegalArgumentException("'" + host + "' is neither a host name nor an IP address");
            }
            names.add(new GeneralName(ip ? GeneralName.iPAddress : GeneralName.dNSName, host));
        }
        return new GeneralNames(names.toArray(GeneralName[]::new));
    }

    private static KeyPair keys() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
    }

    private static ContentSigner signer(KeyPair k) throws Exception {
        return new JcaContentSignerBuilder("SHA256withECDSA").build(k.getPrivate());
    }

    private static BigInteger serial() {
        return new BigInteger(127, RANDOM).add(BigInteger.ONE);
    }

    private static Path pem(Path file, Object object, boolean secret) throws IOException {
        StringWriter s = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(s)) {
            w.writeObject(object instanceof JcaPKCS8Generator g ? g.generate() : object);
        }
        Files.deleteIfExists(file);
        if (secret) {
            try {
                Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException notPosix) {
                Files.createFile(file);
            }
        } else {
            Files.createFile(file);
        }
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII, StandardOpenOption.TRUNCATE_EXISTING)) {
            w.write(s.toString());
        }
        return file;
    }
}
