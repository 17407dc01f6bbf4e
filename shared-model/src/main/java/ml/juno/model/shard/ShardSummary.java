package ml.juno.model.shard;

/**
 * What a node says about the shard it loaded (the wire's {@code ShardInfo}, through {@code ProtoMapping}).
 *
 * @param nodeId          the node
 * @param assignment      its layers or tensor slice
 * @param modelLayers     layers of the whole model
 * @param embeds          takes token ids
 * @param producesLogits  returns logits (the last stage, or tensor rank 0)
 * @param embedding       hidden size
 * @param vocab           logits per row
 * @param weightBytes     bytes of mapped weights one step reads
 * @param kvBytes         off-heap KV memory
 * @param memoryUsedBytes heap in use after loading
 * @param memoryFreeBytes heap left
 * @param backend         who computes the matrix products: "native" or "java"
 * @param isa             their instruction set
 * @param loadMillis      time the load took
 */
public record ShardSummary(String nodeId, ShardAssignment assignment, int modelLayers, boolean embeds,
                           boolean producesLogits, int embedding, int vocab, long weightBytes, long kvBytes,
                           long memoryUsedBytes, long memoryFreeBytes, String backend, String isa, long loadMillis) {

    /** "layers [a, b) of n" or "tensor slice r/w of n layers", for logs and status messages. */
    public String describe() {
        return assignment.isTensorParallel()
                ? "tensor slice " + assignment.tensorRank() + "/" + assignment.worldSize() + " of " + modelLayers + " layers"
                : "layers [" + assignment.layers().start() + ", " + assignment.layers().end() + ") of " + modelLayers;
    }
}
