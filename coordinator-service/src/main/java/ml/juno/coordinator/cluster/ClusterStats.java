package ml.juno.coordinator.cluster;

/**
 * What a cluster executor sent and waited for, all nodes together.
 *
 * @param steps         forward steps that succeeded
 * @param tokens        tokens computed by those steps
 * @param bytesSent     serialized request bytes, coordinator to nodes
 * @param bytesReceived serialized answer bytes, nodes to coordinator
 * @param hops          step requests answered (one per node per step)
 * @param hopNanos      send-to-answer time of those hops, summed
 * @param computeNanos  time the nodes report computing (without waiting for all-reduce sums), summed
 * @param reductions    all-reduces done (tensor parallel: two per layer per step)
 */
public record ClusterStats(long steps, long tokens, long bytesSent, long bytesReceived, long hops, long hopNanos,
                           long computeNanos, long reductions) {

    /** Time per hop not spent computing: transfer, encoding, queueing (and all-reduce rounds). */
    public double overheadMillisPerHop() {
        return hops == 0 ? 0 : (hopNanos - computeNanos) / 1e6 / hops;
    }

    public ClusterStats minus(ClusterStats o) {
        return new ClusterStats(steps - o.steps, tokens - o.tokens, bytesSent - o.bytesSent, bytesReceived - o.bytesReceived,
                hops - o.hops, hopNanos - o.hopNanos, computeNanos - o.computeNanos, reductions - o.reductions);
    }
}
