package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/** Q4_1: 32 values per block as {@code fp16 d, fp16 m, u8 qs[16]}; x ≈ d·q + m, q in 0..15 (ggml {@code quantize_row_q4_1_ref}). */
public final class Q4_1Quantizer implements RowQuantizer {
    private static final int QK = 32;

    @Override
    public GgmlType type() {
        return GgmlType.Q4_1;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        for (int b = 0; b < n / QK; b++, xo += QK, yo += 20) {
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
            float d = (max - min) / ((1 << 4) - 1);
            float id = d != 0 ? 1.0f / d : 0.0f;
            QuantMath.putShort(y, yo, QuantMath.toHalf(d));
            QuantMath.putShort(y, yo + 2, QuantMath.toHalf(min));
            for (int j = 0; j < QK / 2; ++j) {
                int xi0 = Math.min(15, (byte) (int) ((x[xo + j] - min) * id + 0.5f));
                int xi1 = Math.min(15, (byte) (int) ((x[xo + QK / 2 + j] - min) * id + 0.5f));
                y[yo + 4 + j] = (byte) (xi0 | (xi1 << 4));
            }
        }
    }
}
