package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * Q3_K: 256 values per super-block as {@code u8 hmask[32], u8 qs[64], u8 scales[12], fp16 d}; 16 groups of 16
 * with signed 6-bit scales, 3-bit levels split into 2 low bits and a high-bit mask (ggml {@code quantize_row_q3_K_ref}).
 */
public final class Q3_KQuantizer implements RowQuantizer {
    private static final int QK_K = 256;
    private static final int BYTES = 110;
    private static final int HMASK = 0;
    private static final int QS = 32;
    private static final int SCALES = 96;
    private static final int D = 108;

    private final byte[] levels = new byte[QK_K];   // [256] biased levels 0..7
    private final float[] scales = new float[QK_K / 16];
    private final float[] xt = new float[128];      // [16 values][8 groups], half a super-block
    private final float[] lt = new float[128];
    private final boolean lanes;

    /** The fast quantizer: eight groups at a time with the Vector API. */
    public Q3_KQuantizer() {
        this(true);
    }

    /**
     * @param lanes {@code false} for the scalar reference path (same bytes, slower)
     */
    public Q3_KQuantizer(boolean lanes) {
        this.lanes = lanes;
    }

    @Override
    public GgmlType type() {
        return GgmlType.Q3_K;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        byte[] L = levels;
        for (int b = 0; b < n / QK_K; b++, xo += QK_K, yo += BYTES) {
            float maxScale = 0;
            float amax = 0;
            for (int half = 0; half < 2; half++) {
                if (!lanes || !lanes(x, xo, half, L)) {
                    for (int j = 8 * half; j < 8 * half + 8; ++j) {
                        scales[j] = QuantMath.makeQ3Quants(16, 4, x, xo + 16 * j, L, 16 * j, true);
                    }
                }
            }
            for (int j = 0; j < QK_K / 16; ++j) {
                float scale = Math.abs(scales[j]);
                if (scale > amax) {
                    amax = scale;
                    maxScale = scales[j];
                }
            }
            for (int j = 0; j < 12; j++) {
                y[yo + SCALES + j] = 0;
            }
            if (maxScale != 0) {
                float iscale = -32.f / maxScale;
                for (int j = 0; j < QK_K / 16; ++j) {
                    int l = (byte) QuantMath.nearestInt(iscale * scales[j]);
                    l = Math.max(-32, Math.min(31, l)) + 32;
                    if (j < 8) {
                        y[yo + SCALES + j] = (byte) (l & 0xF);
                    } else {
                        y[yo + SCALES + j - 8] |= (byte) ((l & 0xF) << 4);
                    }
                    l >>= 4;
                    y[yo + SCALES + j % 4 + 8] |= (byte) (l << (2 * (j / 4)));
                }
                QuantMath.putShort(y, yo + D, QuantMath.toHalf(1 / iscale));
            } else {
                QuantMath.putShort(y, yo + D, QuantMath.toHalf(0.f));
            }
            float dAll = QuantMath.fromHalf(Q2_KQuantizer.getShort(y, yo + D));
            for (int j = 0; j < QK_K / 16; ++j) {
                int sc = j < 8 ? y[yo + SCALES + j] & 0xF : (y[yo + SCALES + j - 8] & 0xFF) >> 4;
                sc = (sc | (((y[yo + SCALES + 8 + j % 4] >> (2 * (j / 4))) & 3) << 4)) - 32;
                float d = dAll * sc;
                if (d == 0) {
                    continue;
                }
                for (int ii = 0; ii < 16; ++ii) {
                    int l = QuantMath.nearestInt(x[xo + 16 * j + ii] / d);
                    l = Math.max(-4, Math.min(3, l));
                    L[16 * j + ii] = (byte) (l + 4);
                }
            }
            for (int j = 0; j < QK_K / 8; j++) {
                y[yo + HMASK + j] = 0;
            }
            int m = 0;
            int hm = 1;
            for (int j = 0; j < QK_K; ++j) {
                if (L[j] > 3) {
                    y[yo + HMASK + m] |= (byte) hm;
                    L[j] -= 4;
                }
                if (++m == QK_K / 8) {
                    m = 0;
                    hm <<= 1;
                }
            }
            for (int j = 0; j < QK_K; j += 128) {
                for (int l = 0; l < 32; ++l) {
                    y[yo + QS + j / 4 + l] = (byte) (L[j + l] | (L[j + l + 32] << 2) | (L[j + l + 64] << 4) | (L[j + l + 96] << 6));
                }
            }
        }
    }

    /** Groups {@code 8*half .. 8*half+7} through {@link QuantLanes#q3}; false when the scalar path must redo them. */
    private boolean lanes(float[] x, int xo, int half, byte[] L) {
        for (int j = 0; j < 8; j++) {
            for (int i = 0; i < 16; i++) {
                xt[i * 8 + j] = x[xo + 16 * (8 * half + j) + i];
            }
        }
        if (!QuantLanes.q3(16, 4, xt, lt, scales, 8 * half)) {
            return false;
        }
        for (int j = 0; j < 8; j++) {
            for (int i = 0; i < 16; i++) {
                L[16 * (8 * half + j) + i] = (byte) lt[i * 8 + j];
            }
        }
        return true;
    }
}
