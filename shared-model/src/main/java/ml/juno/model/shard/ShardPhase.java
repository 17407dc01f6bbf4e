package ml.juno.model.shard;

/** Where a node's shard stands (the wire's {@code ShardState}): a node starts EMPTY, which is not ready. */
public enum ShardPhase {
    EMPTY,
    LOADING,
    READY,
    FAILED
}
