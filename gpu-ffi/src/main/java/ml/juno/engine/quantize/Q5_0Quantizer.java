package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * Q5_0: 32 values per block as {@code fp16 d, u32 qh, u8 qs[16]}; d = max/-16, low nibbles as Q4_0, the fifth
 * bit of value j in bit j of qh (ggml {@code quantize_row_q5_0_ref}).
 */
public final class Q5_0Quantizer implements RowQuantizer {
    private static final int QK = 32;

    @Override
    public GgmlType type() {
        return GgmlType.Q5_0;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        for (int b = 0; b < n / QK; b++, xo += QK, yo += 22) {
            float amax = 0.0f;
            float max = 0.0f;
            for (int j = 0; j < QK; j++) {
                float v = x[xo + j];
                if (amax < Math.abs(v)) {
                    amax = Math.abs(v);
                    max = v;
                }
            }
            float d = max / -16;
            float id = d != 0 ? 1.0f / d : 0.0f;
            QuantMath.putShort(y, yo, QuantMath.toHalf(d));
            int qh = 0;
            for (int j = 0; j < QK / 2; ++j) {
                int xi0 = Math.min(31, (byte) (int) (x[xo + j] * id + 16.5f)) & 0xFF;
                int xi1 = Math.min(31, (byte) (int) (x[xo + QK / 2 + j] * id + 16.5f)) & 0xFF;
                y[yo + 6 + j] = (byte) ((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
                qh |= ((xi0 & 0x10) >>> 4) << j;
                qh |= ((xi1 & 0x10) >>> 4) << (j + QK / 2);
            }
            putInt(y, yo + 2, qh);
        }
    }

    static void putInt(byte[] y, int off, int v) {
        y[off] = (byte) v;
        y[off + 1] = (byte) (v >> 8);
        y[off + 2] = (byte) (v >> 16);
        y[off + 3] = (byte) (v >> 24);
    }
}
