package ml.juno.coordinator.cluster;

import java.time.Duration;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * Coordinator → node heartbeats, apart from the steps: every second each node that is up and has not answered a step
 * in the last half second is asked for its status with a short deadline, on a thread of its own that no step can hold
 * up. A node that does not answer (frozen, SIGSTOP, its machine gone) is marked down at once and a step waiting for it
 * fails now instead of at the step deadline; readiness turns DOWN, and the health loop loads its shard again when it
 * answers. While steps flow, their answers show the nodes alive: a status call then would only take time on the cores
 * the nodes compute on (a gRPC call on each side, a few ms of a node's CPU in code that runs too rarely to be
 * compiled), so it is skipped; a node that freezes mid-generation stops answering and is asked within 1.5 s.
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
                if (stopped || !link.isUp() || link.answeredWithin(PERIOD.toNanos() / 2)) {
                    continue; // a node that answered a step within the last half period is alive: no call on its cores
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
