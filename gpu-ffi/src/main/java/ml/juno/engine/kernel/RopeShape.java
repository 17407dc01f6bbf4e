package ml.juno.engine.kernel;

/** Where rotary embedding applies: {@code heads} heads of {@code headDim}, the first {@code ropeDims} of each rotated. */
public record RopeShape(int heads, int headDim, int ropeDims, boolean neox) {
    public RopeShape {
        if (heads <= 0 || headDim <= 0 || ropeDims <= 0 || ropeDims > headDim || ropeDims % 2 != 0) {
            throw new IllegalArgumentException("bad rope shape: heads " + heads + ", head dim " + headDim + ", rope dims " + ropeDims);
        }
    }
}
