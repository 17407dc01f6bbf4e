package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * Q2_K: 256 values per super-block as {@code u8 scales[16], u8 qs[64], fp16 d, fp16 dmin}; 16 groups of 16
 * with a 4-bit scale and 4-bit min each, 2-bit levels (ggml {@code quantize_row_q2_K_ref}).
 */
public final class Q2_KQuantizer implements RowQuantizer {
    private static final int QK_K = 256;
    private static final int BYTES = 84;

    private final byte[] levels = new byte[QK_K];   // [256] levels 0..3
    private final byte[] aux = new byte[16];
    private final float[] weights = new float[16];
    private final float[] mins = new float[QK_K / 16];
    private final float[] scales = new float[QK_K / 16];
    private final float[] xt = new float[128];      // [16 values][8 groups], half a super-block
    private final float[] wt = new float[128];
    private final float[] lt = new float[128];
    private final float[] auxT = new float[128];
    private final boolean lanes;

    /** The fast quantizer: eight groups at a time with the Vector API. */
    public Q2_KQuantizer() {
        this(true);
    }

    /**
     * @param lanes {@code false} for the scalar reference path (same bytes, slower)
     */
    public Q2_KQuantizer(boolean lanes) {
        this.lanes = lanes;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q2_K;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        final float q4scale = 15.f;
        byte[] L = levels;
        for (int b = 0; b < n / QK_K; b++, xo += QK_K, yo += BYTES) {
            float maxScale = 0;
            float maxMin = 0;
            if (lanes) {
                for (int half = 0; half < 2; half++) {
                    for (int j = 0; j < 8; j++) {
                        for (int i = 0; i < 16; i++) {
                            float v = x[xo + 16 * (8 * half + j) + i];
                            xt[i * 8 + j] = v;
                            wt[i * 8 + j] = Math.abs(v);
                        }
                    }
                    QuantLanes.qkx2(16, 3, xt, wt, lt, auxT, scales, mins, 8 * half, -0.5f, 0.1f, 15, true);
                    for (int j = 0; j < 8; j++) {
                        for (int i = 0; i < 16; i++) {
                            L[16 * (8 * half + j) + i] = (byte) lt[i * 8 + j];
                        }
                    }
                }
            } else {
                for (int j = 0; j < QK_K / 16; ++j) {
                    for (int l = 0; l < 16; ++l) {
                        weights[l] = Math.abs(x[xo + 16 * j + l]);
                    }
                    scales[j] = QuantMath.makeQkx2Quants(16, 3, x, xo + 16 * j, weights, L, 16 * j, mins, j, aux,
                            -0.5f, 0.1f, 15, true);
                }
            }
            for (int j = 0; j < QK_K / 16; ++j) {
                if (scales[j] > maxScale) {
                    maxScale = scales[j];
                }
                if (mins[j] > maxMin) {
                    maxMin = mins[j];
                }
            }
            // y layout: scales at 0..15, qs at 16..79, d at 80, dmin at 82
            if (maxScale > 0) {
                float iscale = q4scale / maxScale;
                for (int j = 0; j < QK_K / 16; ++j) {
                    y[yo + j] = (byte) QuantMath.nearestInt(iscale * scales[j]);
                }
                QuantMath.putShort(y, yo + 80, QuantMath.toHalf(maxScale / q4scale));
            } else {
                for (int j = 0; j < QK_K / 16; ++j) {
                    y[yo + j] = 0;
                }
                QuantMath.putShort(y, yo + 80, QuantMath.toHalf(0.f));
            }
            if (maxMin > 0) {
                float iscale = q4scale / maxMin;
                for (int j = 0; j < QK_K / 16; ++j) {
                    int l = QuantMath.nearestInt(iscale * mins[j]);
                    y[yo + j] |= (byte) (l << 4);
                }
                QuantMath.putShort(y, yo + 82, QuantMath.toHalf(maxMin / q4scale));
            } else {
                QuantMath.putShort(y, yo + 82, QuantMath.toHalf(0.f));
            }
            float dAll = QuantMath.fromHalf(getShort(y, yo + 80));
            float mAll = QuantMath.fromHalf(getShort(y, yo + 82));
            for (int j = 0; j < QK_K / 16; ++j) {
                int sc = y[yo + j] & 0xFF;
                float d = dAll * (sc & 0xF);
                if (d == 0) {
                    continue;
                }
                float dm = mAll * (sc >> 4);
                for (int ii = 0; ii < 16; ++ii) {
                    int l = QuantMath.nearestInt((x[xo + 16 * j + ii] + dm) / d);
                    L[16 * j + ii] = (byte) Math.max(0, Math.min(3, l));
                }
            }
            for (int j = 0; j < QK_K; j += 128) {
                for (int l = 0; l < 32; ++l) {
                    y[yo + 16 + j / 4 + l] = (byte) (L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
                }
            }
        }
    }

    static short getShort(byte[] y, int off) {
        return (short) ((y[off] & 0xFF) | (y[off + 1] << 8));
    }
}
