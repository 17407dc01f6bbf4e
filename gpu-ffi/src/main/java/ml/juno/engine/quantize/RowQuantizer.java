package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * Turns float rows into the bytes of one GGML tensor type. An instance owns its scratch buffers, so it is
 * not thread-safe: make one per thread with {@link RowQuantizers#create(GgmlType)}.
 */
public interface RowQuantizer {

    /** The type this quantizer writes. */
    GgmlType type();

    /**
     * Quantizes {@code n} floats (a whole number of blocks) from {@code src[srcOff..]} into
     * {@code type().byteSize(n)} bytes at {@code dst[dstOff..]}, little-endian, exactly as ggml lays them out.
     */
    void quantize(float[] src, int srcOff, int n, byte[] dst, int dstOff);
}
