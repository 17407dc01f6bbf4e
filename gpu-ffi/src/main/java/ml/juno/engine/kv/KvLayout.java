package ml.juno.engine.kv;

/**
 * Shape of a KV cache: {@code layers} layers, {@code slots} sequences, {@code contextLength} positions each, and
 * {@code kvDim} values per position (KV heads × head dim of this shard).
 */
public record KvLayout(int layers, int slots, int contextLength, int kvDim, KvType type) {
    public KvLayout {
        if (layers <= 0 || slots <= 0 || contextLength <= 0 || kvDim <= 0 || type == null) {
            throw new IllegalArgumentException("bad KV layout: layers " + layers + ", slots " + slots + ", context "
                    + contextLength + ", kv dim " + kvDim + ", type " + type);
        }
    }

    /** Bytes of the K (or the V) memory of one layer in the flat layout (a paged cache sizes its pool by {@link KvPaging}). */
    public long layerBytes() {
        return (long) slots * contextLength * kvDim * type.bytes;
    }

    /** Total bytes, keys and values of every layer. */
    public long totalBytes() {
        return 2L * layers * layerBytes();
    }
}
