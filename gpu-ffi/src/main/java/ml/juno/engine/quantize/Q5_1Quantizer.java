package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/** Q5_1: 32 values per block as {@code fp16 d, fp16 m, u32 qh, u8 qs[16]}; x ≈ d·q + m, q in 0..31 (ggml {@code quantize_row_q5_1_ref}). */
public final class Q5_1Quantizer implements RowQuantizer {
    private static final int QK = 32;

    @Override
    public GgmlType type() {
        return GgmlType.Q5_1;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        for (int b = 0; b < n / QK; b++, xo += QK, yo += 24) {
            float min = Float.MAX_VALUE;
            float max = -Float.MAX_VALUE;
            for (int j = 0; j < QK; j++) {
                float v = x[xo + j];
                if (v < min) {
                    min = v;
                }
                if (v > max) {
                    max = v;
                }
            }
            float d = (max - min) / ((1 << 5) - 1);
            float id = d != 0 ? 1.0f / d : 0.0f;
            QuantMath.putShort(y, yo, QuantMath.toHalf(d));
            QuantMath.putShort(y, yo + 2, QuantMath.toHalf(min));
            int qh = 0;
            for (int j = 0; j < QK / 2; ++j) {
                int xi0 = ((int) ((x[xo + j] - min) * id + 0.5f)) & 0xFF;
                int xi1 = ((int) ((x[xo + QK / 2 + j] - min) * id + 0.5f)) & 0xFF;
                y[yo + 8 + j] = (byte) ((xi0 & 0x0F) | ((xi1 & 0x0F) << 4));
                qh |= ((xi0 & 0x10) >>> 4) << j;
                qh |= ((xi1 & 0x10) >>> 4) << (j + QK / 2);
            }
            Q5_0Quantizer.putInt(y, yo + 4, qh);
        }
    }
}
