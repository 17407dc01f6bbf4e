package ml.juno.coordinator.kvcache;

/**
 * Shape of the KV memory of one token, to size the pool from a memory budget.
 *
 * @param layers          layers whose KV is stored (all of them for a single engine)
 * @param kvHeads         key/value heads per layer
 * @param headDim         elements per head
 * @param bytesPerElement 4 for F32, 2 for F16/BF16, 1 for 8-bit caches
 */
public record KvLayout(int layers, int kvHeads, int headDim, int bytesPerElement) {
    public KvLayout {
        if (layers <= 0 || kvHeads <= 0 || headDim <= 0 || bytesPerElement <= 0) {
            throw new IllegalArgumentException("KV layout values must be > 0: " + layers + " layers, "
                    + kvHeads + " heads, " + headDim + " dims, " + bytesPerElement + " bytes");
        }
    }

    /** Bytes of K and V for one token over all layers. */
    public long bytesPerToken() {
        return 2L * layers * kvHeads * headDim * bytesPerElement;
    }
}
