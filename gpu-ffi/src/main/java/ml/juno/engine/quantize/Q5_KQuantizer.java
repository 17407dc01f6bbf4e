package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * Q5_K: 256 values per super-block as {@code fp16 d, fp16 dmin, u8 scales[12], u8 qh[32], u8 qs[128]};
 * Q4_K's grouping with 5-bit levels, the fifth bits in qh (ggml {@code quantize_row_q5_K_ref}).
 */
public final class Q5_KQuantizer implements RowQuantizer {
    private static final int QK_K = 256;
    private static final int BYTES = 176;

    private final KScales.Scratch scratch = new KScales.Scratch();
    private final boolean lanes;

    /** The fast quantizer: eight sub-blocks at a time with the Vector API. */
    public Q5_KQuantizer() {
        this(true);
    }

    /**
     * @param lanes {@code false} for the scalar reference path (same bytes, slower)
     */
    public Q5_KQuantizer(boolean lanes) {
        this.lanes = lanes;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q5_K;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        byte[] L = scratch.levels;
        for (int b = 0; b < n / QK_K; b++, xo += QK_K, yo += BYTES) {
            KScales.search(x, xo, y, yo, 31, -0.5f, 0.1f, 15, scratch, lanes);
            int qh = yo + 16;
            int ql = yo + 48;
            for (int j = 0; j < 32; j++) {
                y[qh + j] = 0;
            }
            int m1 = 1;
            int m2 = 2;
            for (int nn = 0; nn < QK_K; nn += 64) {
                for (int j = 0; j < 32; ++j) {
                    int l1 = L[nn + j];
                    if (l1 > 15) {
                        l1 -= 16;
                        y[qh + j] |= (byte) m1;
                    }
                    int l2 = L[nn + j + 32];
                    if (l2 > 15) {
                        l2 -= 16;
                        y[qh + j] |= (byte) m2;
                    }
                    y[ql + j] = (byte) (l1 | (l2 << 4));
                }
                m1 <<= 2;
                m2 <<= 2;
                ql += 32;
            }
        }
    }
}
