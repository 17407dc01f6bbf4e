package ml.juno.node.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * {@code juno node --join URL}: announces this node to the coordinator's registry ({@code POST URL/v1/cluster/nodes})
 * at start and every {@link #PERIOD} after (each renews its lease there), and says it leaves ({@code DELETE}) when it
 * stops. The coordinator reaches the node at {@code juno.node.advertise} (HOST:PORT), or at the address the
 * announcement came from on this node's port. {@code juno.node.join-key} (env {@code JUNO_NODE_JOIN_KEY}) is sent as
 * {@code Authorization: Bearer}, for a coordinator with API keys. A coordinator that cannot be reached is retried;
 * one that refuses (a bad key, a fixed node list) is logged each time with its reason.
 */
@ApplicationScoped
public class RegistryAnnouncer {
    private static final Logger LOG = Logger.getLogger(RegistryAnnouncer.class);
    static final Duration PERIOD = Duration.ofMillis(Long.getLong("juno.node.announce-period-ms", 3000));

    @ConfigProperty(name = "juno.node.join")
    Optional<String> join;

    @ConfigProperty(name = "juno.node.advertise")
    Optional<String> advertise;

    @ConfigProperty(name = "juno.node.join-key")
    Optional<String> key;

    @ConfigProperty(name = "juno.node.id")
    String nodeId;

    @ConfigProperty(name = "quarkus.http.port")
    int port;

    private final ObjectMapper json = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();
    private volatile Thread thread;
    private volatile String registeredAs; // HOST:PORT the coordinator answered
    private volatile boolean stopping;

    void onStart(@Observes StartupEvent ignored) {
        if (join.isEmpty() || join.get().isBlank()) {
            return;
        }
        URI base = URI.create(join.get().strip().replaceAll("/+$", ""));
        if (base.getScheme() == null || !(base.getScheme().equals("http") || base.getScheme().equals("https")) || base.getHost() == null) {
            throw new IllegalArgumentException("juno.node.join must be the coordinator's URL, like http://HOST:8080, not '" + join.get() + "'");
        }
        thread = Thread.ofPlatform().name("juno-node-announce").daemon().start(() -> loop(base));
    }

    void onStop(@Observes ShutdownEvent ignored) {
        stopping = true;
        Thread t = thread;
        if (t == null) {
            return;
        }
        t.interrupt();
        String as = registeredAs;
        if (as != null) {
            URI base = URI.create(join.get().strip().replaceAll("/+$", ""));
            try {
                HttpResponse<String> r = http.send(request(base.resolve("/v1/cluster/nodes/" + URLEncoder.encode(as, StandardCharsets.UTF_8)))
                        .DELETE().build(), HttpResponse.BodyHandlers.ofString());
                LOG.infof("left the cluster of %s (%d)", base, r.statusCode());
            } catch (IOException e) {
                LOG.warnf("could not tell %s that this node leaves: %s", base, e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private HttpRequest.Builder request(URI uri) {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5));
        key.filter(k -> !k.isBlank()).ifPresent(k -> b.header("Authorization", "Bearer " + k.strip()));
        return b;
    }

    private void loop(URI base) {
        URI nodes = base.resolve("/v1/cluster/nodes");
        String lastProblem = null;
        while (!stopping) {
            String problem = null;
            try {
                Map<String, Object> body = new LinkedHashMap<>();
                body.put("id", nodeId);
                body.put("port", port);
                advertise.filter(a -> !a.isBlank()).ifPresent(a -> body.put("address", a.strip()));
                HttpResponse<String> r = http.send(request(nodes).header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body))).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() == 200) {
                    JsonNode answer = json.readTree(r.body());
                    String as = answer.path("address").asText();
                    if (!as.equals(registeredAs) || answer.path("joined").asBoolean()) {
                        LOG.infof("joined the cluster of %s as %s", base, as);
                    }
                    registeredAs = as;
                } else {
                    problem = "the coordinator at " + base + " refused this node (" + r.statusCode() + "): " + r.body();
                }
            } catch (IOException e) {
                problem = "cannot reach the coordinator at " + base + " (" + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName()) + "); retrying";
            } catch (InterruptedException e) {
                return;
            }
            if (problem != null && !problem.equals(lastProblem)) {
                LOG.warn(problem);
            }
            lastProblem = problem;
            try {
                Thread.sleep(PERIOD);
            } catch (InterruptedException e) {
                return;
            }
        }
    }
}
