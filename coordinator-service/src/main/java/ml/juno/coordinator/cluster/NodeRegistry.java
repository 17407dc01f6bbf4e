package ml.juno.coordinator.cluster;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import org.jboss.logging.Logger;

/**
 * The coordinator's registry of nodes that announced themselves ({@code juno node --join URL}): a node joins with its
 * first announcement, stays a member while it announces again within the lease, and leaves when it says so (a node that
 * stops cleanly) or when its lease runs out (a node that died, or whose host is gone). Every join and leave is logged
 * and bumps the {@link #version()}, which the {@link RegistryExecutor} watches to reload the shards over the new
 * members. Members are in rank (pipeline) order: by node id, then address, so a restart gives the same order.
 *
 * <p>Thread-safe: the HTTP threads announce, the executor's membership thread reads.
 */
public final class NodeRegistry {
    private static final Logger LOG = Logger.getLogger(NodeRegistry.class);

    /** A member: its address (what the coordinator and its peers dial) and the name it reported. */
    public record Member(NodeAddress address, String id) {
    }

    private record Entry(Member member, long expiresAtNanos) {
    }

    private final Duration lease;
    private final LongSupplier clock;
    private final Map<NodeAddress, Entry> members = new LinkedHashMap<>();
    private long version;

    public NodeRegistry(Duration lease) {
        this(lease, System::nanoTime);
    }

    NodeRegistry(Duration lease, LongSupplier clock) {
        if (lease.isNegative() || lease.isZero()) {
            throw new IllegalArgumentException("the node lease must be positive, got " + lease);
        }
        this.lease = lease;
        this.clock = clock;
    }

    /** How long a member stays without announcing again. */
    public Duration lease() {
        return lease;
    }

    /**
     * A node's announcement: it joins (true) or renews its lease (false). A node that comes back under another name at
     * the same address rejoins as the new name.
     */
    public synchronized boolean announce(NodeAddress address, String id) {
        String name = id == null || id.isBlank() ? address.toString() : id.strip();
        expire();
        Entry old = members.put(address, new Entry(new Member(address, name), clock.getAsLong() + lease.toNanos()));
        if (old != null && old.member().id().equals(name)) {
            return false;
        }
        version++;
        notifyAll();
        LOG.infof("node %s (%s) joined the cluster: %d member%s", address, name, members.size(), members.size() == 1 ? "" : "s");
        return true;
    }

    /** A node leaves; false when it was not a member. */
    public synchronized boolean leave(NodeAddress address, String why) {
        expire();
        Entry e = members.remove(address);
        if (e == null) {
            return false;
        }
        version++;
        notifyAll();
        LOG.infof("node %s (%s) left the cluster (%s): %d member%s", address, e.member().id(), why, members.size(), members.size() == 1 ? "" : "s");
        return true;
    }

    /** Removes the members whose lease ran out (each is logged as leaving). */
    public synchronized void expire() {
        long now = clock.getAsLong();
        List<Entry> gone = new ArrayList<>();
        for (Entry e : members.values()) {
            if (now - e.expiresAtNanos() > 0) {
                gone.add(e);
            }
        }
        for (Entry e : gone) {
            members.remove(e.member().address());
            version++;
            LOG.infof("node %s (%s) left the cluster (no announcement for %d s): %d member%s", e.member().address(), e.member().id(),
                    lease.toSeconds(), members.size(), members.size() == 1 ? "" : "s");
        }
        if (!gone.isEmpty()) {
            notifyAll();
        }
    }

    /** The members now, in rank order. */
    public synchronized List<Member> members() {
        expire();
        List<Member> out = new ArrayList<>();
        for (Entry e : members.values()) {
            out.add(e.member());
        }
        out.sort(Comparator.comparing(Member::id).thenComparing(m -> m.address().host()).thenComparingInt(m -> m.address().port()));
        return out;
    }

    /** Changes with every join and leave. */
    public synchronized long version() {
        expire();
        return version;
    }

    /**
     * Waits until the version differs from {@code seen} or {@code timeout} passes (leases are checked as it waits);
     * returns the version then.
     */
    public synchronized long awaitChange(long seen, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            expire();
            if (version != seen) {
                return version;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return version;
            }
            wait(Math.max(1, Math.min(left / 1_000_000, 500)));
        }
    }
}
