package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * Q4_K: 256 values per super-block as {@code fp16 d, fp16 dmin, u8 scales[12], u8 qs[128]}; eight groups of
 * 32 with 6-bit scale and min, 4-bit levels (ggml {@code quantize_row_q4_K_ref}).
 */
public final class Q4_KQuantizer implements RowQuantizer {
    private static final int QK_K = 256;
    private static final int BYTES = 144;

    private final KScales.Scratch scratch = new KScales.Scratch();
    private final boolean lanes;

    /** The fast quantizer: eight sub-blocks at a time with the Vector API. */
    public Q4_KQuantizer() {
        this(true);
    }

    /**
     * @param lanes {@code false} for the scalar reference path (same bytes, slower)
     */
    public Q4_KQuantizer(boolean lanes) {
        this.lanes = lanes;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q4_K;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        byte[] L = scratch.levels;
        for (int b = 0; b < n / QK_K; b++, xo += QK_K, yo += BYTES) {
            KScales.search(x, xo, y, yo, 15, -1.f, 0.1f, 20, scratch, lanes);
            int q = yo + 16;
            for (int j = 0; j < QK_K; j += 64) {
                for (int l = 0; l < 32; ++l) {
                    y[q + l] = (byte) (L[j + l] | (L[j + l + 32] << 4));
                }
                q += 32;
            }
        }
    }
}
