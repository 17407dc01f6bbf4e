package ml.juno.node.grpc;

import io.grpc.ChannelCredentials;
import io.grpc.InsecureChannelCredentials;
import io.grpc.TlsChannelCredentials;
import jakarta.enterprise.context.ApplicationScoped;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;
import ml.juno.model.shard.ShardLoad;
import ml.juno.node.runtime.RankReduce;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Opens a tensor slice's gRPC links to its peers, and a pipeline stage's link to the next stage. Under mutual TLS ({@code juno node --tls-dir}) the node dials its
 * peers as a client with its own certificate (the one it serves with) and trusts only the cluster's CA, so a peer
 * accepts it as it accepts the coordinator; without TLS the links are plaintext, like the node's port.
 */
@ApplicationScoped
public class PeerNetwork implements RankReduce.Network {

    @ConfigProperty(name = "quarkus.tls.juno.key-store.pem.0.cert")
    Optional<String> cert;

    @ConfigProperty(name = "quarkus.tls.juno.key-store.pem.0.key")
    Optional<String> key;

    @ConfigProperty(name = "quarkus.tls.juno.trust-store.pem.certs")
    Optional<String> ca;

    @Override
    public RankReduce.Outbound open(ShardLoad.Tensor shard, RankReduce reduce) {
        return new PeerLinks(shard, reduce, credentials());
    }

    @Override
    public RankReduce.Outbound openStage(ShardLoad.Pipeline stage, ml.juno.node.runtime.StageLink link) {
        return new PeerLinks(stage, credentials());
    }

    ChannelCredentials credentials() {
        if (cert.isEmpty() && key.isEmpty() && ca.isEmpty()) {
            return InsecureChannelCredentials.create();
        }
        if (cert.isEmpty() || key.isEmpty() || ca.isEmpty()) {
            throw new IllegalStateException("mutual TLS needs this node's certificate, its key and the cluster CA to dial its peers");
        }
        try {
            return TlsChannelCredentials.newBuilder().keyManager(new File(cert.get()), new File(key.get()))
                    .trustManager(new File(ca.get())).build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read this node's TLS files for its peer links: " + e.getMessage(), e);
        }
    }
}
