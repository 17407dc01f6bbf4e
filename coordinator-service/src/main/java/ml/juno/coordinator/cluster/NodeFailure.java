package ml.juno.coordinator.cluster;

/** A node stopped answering (its stream ended or broke, a call failed, a deadline passed), or answered an error. */
final class NodeFailure extends Exception {
    private final transient NodeLink link;
    private final boolean alive;

    /** The node is gone or unreachable. */
    NodeFailure(NodeLink link, String message) {
        this(link, message, false);
    }

    /**
     * @param alive true when the node answered (with an error): it stays up
     */
    NodeFailure(NodeLink link, String message, boolean alive) {
        super(message);
        this.link = link;
        this.alive = alive;
    }

    private boolean staleStream;

    /**
     * A step that was in flight on a step stream another step's failure reset: it fails with its own message, and the
     * failure policy does not reset the streams again (the steps sent on the new ones are fine).
     */
    static NodeFailure staleStream(NodeLink link, String message) {
        NodeFailure f = new NodeFailure(link, message, true);
        f.staleStream = true;
        return f;
    }

    boolean staleStream() {
        return staleStream;
    }

    NodeLink link() {
        return link;
    }

    boolean nodeAlive() {
        return alive;
    }
}
