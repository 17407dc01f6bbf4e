package ml.juno.coordinator.cluster;

import java.time.Duration;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Coordinator → node heartbeats, apart from the steps: every second each node that is up is asked for its status with a
 * short deadline, on a thread of its own that no step can hold up. A node that does not answer (frozen, SIGSTOP, its
 * machine gone) is marked down at once and a step waiting for it fails now instead of at the step deadline; readiness
 * turns DOWN, and the health loop loads its shard again when it answers.
 */
final class Heartbeat {

    private static final Logger LOG = Logger.getLogger(Heartbeat.class);
    /** Time between two rounds. */
    static final Duration PERIOD = Duration.ofMillis(Long.getLong("juno.cluster.heartbeat-period-ms", 1000));
    /** How long a node may take to answer one. */
    static final Duration TIMEOUT = Duration.ofMillis(Long.getLong("juno.cluster.heartbeat-timeout-ms", 3000));

    private final List<NodeLink> links;
    private final Thread thread;
    private volatile boolean stopped;

    Heartbeat(List<NodeLink> links) {
        this.links = links;
        this.thread = Thread.ofPlatform().name("juno-cluster-heartbeat").daemon().unstarted(this::loop);
    }

    void start() {
        thread.start();
    }

    void stop() {
        stopped = true;
        thread.interrupt();
    }

    private void loop() {
        while (!stopped) {
            try {
                Thread.sleep(PERIOD);
            } catch (InterruptedException e) {
                return;
            }
            for (NodeLink link : links) {
                if (stopped || !link.isUp()) {
                    continue;
                }
                try {
                    link.status(TIMEOUT);
                } catch (NodeFailure e) {
                    if (!stopped && link.isUp()) {
                        String why = "missed its heartbeat (no status within " + TIMEOUT.toMillis() + " ms): " + e.getMessage();
                        LOG.warnf("node %s %s; marking it down", link.address, why);
                        link.abort(why);
                    }
                }
            }
        }
    }
}
