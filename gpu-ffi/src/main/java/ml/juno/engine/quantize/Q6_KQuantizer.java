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
            for (int ib = 0; ib < QK_K / 16; ++ib) {
                float scale = QuantMath.makeQxQuants(16, 32, x, xo + 16 * ib, L, 16 * ib, 1);
                scales[ib] = scale;
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
