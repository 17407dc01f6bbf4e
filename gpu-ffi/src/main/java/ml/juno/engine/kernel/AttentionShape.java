package ml.juno.engine.kernel;

/**
 * Grouped-query attention geometry: {@code heads} query heads share {@code kvHeads} key/value heads
 * ({@code heads / kvHeads} queries per group), each {@code headDim} wide; scores are scaled by {@code scale}.
 */
public record AttentionShape(int heads, int kvHeads, int headDim, float scale) {
    public AttentionShape {
        if (heads <= 0 || kvHeads <= 0 || headDim <= 0 || heads % kvHeads != 0) {
            throw new IllegalArgumentException("bad attention shape: " + heads + " heads, " + kvHeads + " kv heads, head dim " + headDim);
        }
    }

    public int qDim() {
        return heads * headDim;
    }

    public int kvDim() {
        return kvHeads * headDim;
    }
}
