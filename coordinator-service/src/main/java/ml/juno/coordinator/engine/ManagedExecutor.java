package ml.juno.coordinator.engine;

/**
 * An {@link Executor} owned by an {@link InferenceEngine}: it counts what it computed, may be unhealthy for a while
 * (a cluster with a node down), and is closed with the engine.
 */
public interface ManagedExecutor extends Executor, AutoCloseable {

    /** Raw logits of each token-producing row go to {@code o} too ({@code null}: none). */
    void observeLogits(LogitsObserver o);

    /** Tokens computed as prefill. */
    long prefillTokens();

    /** Forward steps that succeeded. */
    long steps();

    /** False while steps cannot run (e.g. a node of the cluster is down); the engine is then not ready. */
    default boolean healthy() {
        return true;
    }

    /** Why steps cannot run now ({@link #healthy()} false), or "". */
    default String healthMessage() {
        return "";
    }

    /** The kernels that compute the steps (in process, or on the nodes); {@link BackendInfo#UNKNOWN} until known. */
    default BackendInfo backend() {
        return BackendInfo.UNKNOWN;
    }

    /** Where the steps run: in process, or on which nodes with which shards. */
    default Topology topology() {
        return Topology.LOCAL;
    }

    @Override
    void close();
}
