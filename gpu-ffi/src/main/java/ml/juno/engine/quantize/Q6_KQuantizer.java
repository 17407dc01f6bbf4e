package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * Q6_K: 256 values per super-block as {@code u8 ql[128], u8 qh[64], i8 scales[16], fp16 d}; 16 groups of 16
 * with signed 8-bit scales, 6-bit levels split into low nibbles and 2 high bits (ggml {@code quantize_row_q6_K_ref}).
 */
public final class Q6_KQuantizer implements RowQuantizer {
    private static final int QK_K = 256;
    private static final int BYTES = 210;
    private static final int QH = 128;
    private static final int SCALES = 192;
    private static final int D = 208;

    private final byte[] levels = new byte[QK_K];   // [256] biased levels 0..63
    private final float[] scales = new float[QK_K / 16];
    private final float[] xt = new float[128];      // [16 values][8 groups], one half of a super-block
    private final float[] lt = new float[128];
    private final boolean lanes;

    /** The fast quantizer: eight groups at a time with the Vector API. */
    public Q6_KQuantizer() {
        this(true);
    }

    /**
     * @param lanes {@code false} for the scalar reference path (same bytes, slower)
     */
    public Q6_KQuantizer(boolean lanes) {
        this.lanes = lanes;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q6_K;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        byte[] L = levels;
        for (int b = 0; b < n / QK_K; b++, xo += QK_K, yo += BYTES) {
            float maxScale = 0;
            float maxAbsScale = 0;
            if (lanes) {
                for (int half = 0; half < 2; half++) {
                    for (int j = 0; j < 8; j++) {
                        for (int i = 0; i < 16; i++) {
                            xt[i * 8 + j] = x[xo + 16 * (8 * half + j) + i];
                        }
                    }
                    QuantLanes.qx(16, 32, xt, lt, scales, 8 * half);
                    for (int j = 0; j < 8; j++) {
                        for (int i = 0; i < 16; i++) {
                            L[16 * (8 * half + j) + i] = (byte) lt[i * 8 + j];
                        }
                    }
                }
            } else {
                for (int ib = 0; ib < QK_K / 16; ++ib) {
                    scales[ib] = QuantMath.makeQxQuants(16, 32, x, xo + 16 * ib, L, 16 * ib, 1);
                }
            }
            for (int ib = 0; ib < QK_K / 16; ++ib) {
                float scale = scales[ib];
                float absScale = Math.abs(scale);
                if (absScale > maxAbsScale) {
                    maxAbsScale = absScale;
                    maxScale = scale;
                }
            }
            if (maxAbsScale < QuantMath.GROUP_MAX_EPS) {
                for (int j = 0; j < BYTES; j++) {
                    y[yo + j] = 0;
                }
                continue;
            }
            float iscale = -128.f / maxScale;
            QuantMath.putShort(y, yo + D, QuantMath.toHalf(1 / iscale));
            for (int ib = 0; ib < QK_K / 16; ++ib) {
                y[yo + SCALES + ib] = (byte) Math.min(127, QuantMath.nearestInt(iscale * scales[ib]));
            }
            float dAll = QuantMath.fromHalf(Q2_KQuantizer.getShort(y, yo + D));
            for (int j = 0; j < QK_K / 16; ++j) {
                float d = dAll * y[yo + SCALES + j];
                if (d == 0) {
                    continue;
                }
                for (int ii = 0; ii < 16; ++ii) {
                    int l = QuantMath.nearestInt(x[xo + 16 * j + ii] / d);
                    l = Math.max(-32, Math.min(31, l));
                    L[16 * j + ii] = (byte) (l + 32);
                }
            }
            int ql = yo;
            int qh = yo + QH;
            for (int j = 0; j < QK_K; j += 128) {
                for (int l = 0; l < 32; ++l) {
                    int q1 = L[j + l] & 0xF;
                    int q2 = L[j + l + 32] & 0xF;
                    int q3 = L[j + l + 64] & 0xF;
                    int q4 = L[j + l + 96] & 0xF;
                    y[ql + l] = (byte) (q1 | (q3 << 4));
                    y[ql + l + 32] = (byte) (q2 | (q4 << 4));
                    y[qh + l] = (byte) ((L[j + l] >> 4) | ((L[j + l + 32] >> 4) << 2) | ((L[j + l + 64] >> 4) << 4) | ((L[j + l + 96] >> 4) << 6));
                }
                ql += 64;
                qh += 32;
            }
        }
    }
}
