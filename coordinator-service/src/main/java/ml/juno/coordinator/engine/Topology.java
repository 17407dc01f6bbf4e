package ml.juno.coordinator.engine;

import java.util.List;

/**
 * Where an engine's steps run, for operators ({@code GET /v1/cluster/health}): in this process, or on nodes with their
 * shards and state.
 *
 * @param mode      {@code local}, {@code pipeline} or {@code tensor}
 * @param dtype     activations on the wire ({@code FLOAT16}, …), or "" in process
 * @param byteOrder byte order on the wire, or "" in process
 * @param nodes     the nodes in rank order (empty in process)
 */
public record Topology(String mode, String dtype, String byteOrder, List<Node> nodes) {

    /** Steps run in this process. */
    public static final Topology LOCAL = new Topology("local", "", "", List.of());

    public Topology {
        nodes = List.copyOf(nodes);
    }

    /**
     * One node and its shard.
     *
     * @param address    host:port
     * @param up         serving steps now
     * @param reason     why not, when down ("" when up)
     * @param firstLayer first layer of its shard
     * @param endLayer   one past its last layer
     * @param tensorRank its slice of each layer (0 of 1 in a pipeline)
     * @param worldSize  slices per layer
     * @param bytesSent     bytes sent to it since the engine started
     * @param bytesReceived bytes received from it
     * @param calls         step calls it answered
     * @param callNanos     their time from send to answer, summed
     * @param computeNanos  the time it says it computed, summed
     * @param reductions    all-reduces it did with its tensor-parallel peers
     * @param reduceNanos   the time they took it, summed
     * @param peerBytesSent bytes of partials it sent its peers, node to node
     */
    public record Node(String address, boolean up, String reason, int firstLayer, int endLayer, int tensorRank, int worldSize,
                       long bytesSent, long bytesReceived, long calls, long callNanos, long computeNanos, long reductions,
                       long reduceNanos, long peerBytesSent) {
    }
}
