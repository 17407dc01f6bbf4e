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

    NodeLink link() {
        return link;
    }

    boolean nodeAlive() {
        return alive;
    }
}
