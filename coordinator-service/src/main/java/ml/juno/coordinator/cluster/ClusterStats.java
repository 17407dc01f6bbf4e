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
 * @param computeNanos  time the nodes report computing (all-reduces excluded), summed
 * @param reductions    all-reduces done (tensor parallel: two per layer per step), counted once for all ranks
 * @param reduceNanos   time the ranks spent in them (encode, send, wait for the peers' partials, sum), all ranks summed
 * @param peerBytes     serialized partials the ranks sent each other, node to node (none of it through the coordinator)
 * @param overlapped    steps sent while an earlier step was still in the pipeline's stages (steps in flight)
 * @param sharedMemoryHops hops whose request and answer went through a shared-memory channel (a node on the
 *                      coordinator's host), not the gRPC stream
 */
public record ClusterStats(long steps, long tokens, long bytesSent, long bytesReceived, long hops, long hopNanos,
                           long computeNanos, long reductions, long reduceNanos, long peerBytes, long overlapped,
                           long sharedMemoryHops) {

    /** Time per hop not spent computing: transfer, encoding, queueing, and the ranks' all-reduces. */
    public double overheadMillisPerHop() {
        return hops == 0 ? 0 : (hopNanos - computeNanos) / 1e6 / hops;
    }

    /** Bytes between the coordinator and the nodes, both ways, per token computed. */
    public double coordinatorBytesPerToken() {
        return tokens == 0 ? 0 : (double) (bytesSent + bytesReceived) / tokens;
    }

    /** Bytes the ranks sent each other per token computed. */
    public double peerBytesPerToken() {
        return tokens == 0 ? 0 : (double) peerBytes / tokens;
    }

    /** One rank's time in one all-reduce (its node-to-node hop: send its partial, wait for the peers', sum), on average. */
    public double millisPerReduction() {
        return reductions == 0 || hops == 0 || steps == 0 ? 0 : reduceNanos / 1e6 / reductions / ((double) hops / steps);
    }

    public ClusterStats minus(ClusterStats o) {
        return new ClusterStats(steps - o.steps, tokens - o.tokens, bytesSent - o.bytesSent, bytesReceived - o.bytesReceived,
                hops - o.hops, hopNanos - o.hopNanos, computeNanos - o.computeNanos, reductions - o.reductions,
                reduceNanos - o.reduceNanos, peerBytes - o.peerBytes, overlapped - o.overlapped,
                sharedMemoryHops - o.sharedMemoryHops);
    }
}
