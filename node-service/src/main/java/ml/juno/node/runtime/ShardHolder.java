package ml.juno.node.runtime;

import jakarta.enterprise.context.ApplicationScoped;
import java.util.concurrent.atomic.AtomicReference;
import ml.juno.node.v1.ShardState;

/**
 * Owns the shard this node serves. A node starts empty (and therefore not ready); loading a shard on
 * request moves it to READY, or to FAILED with the reason. Nothing here ever pretends a shard is loaded.
 */
@ApplicationScoped
public class ShardHolder {

    public record State(ShardState state, String message) {}

    private final AtomicReference<State> state = new AtomicReference<>(new State(ShardState.SHARD_STATE_EMPTY, "no shard loaded"));

    public State state() {
        return state.get();
    }

    public boolean ready() {
        return state.get().state() == ShardState.SHARD_STATE_READY;
    }
}
