package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * Q4_0: 32 values per block as {@code fp16 d, u8 qs[16]}; d = max/-8 where max is the value of largest
 * magnitude, value j in the low nibble of qs[j], value j+16 in the high nibble (ggml {@code quantize_row_q4_0_ref}).
 */
public final class Q4_0Quantizer implements RowQuantizer {
    private static final int QK = 32;

    @Override
    public GgmlType type() {
        return GgmlType.Q4_0;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        for (int b = 0; b < n / QK; b++, xo += QK, yo += 18) {
            float amax = 0.0f;
            float max = 0.0f;
            for (int j = 0; j < QK; j++) {
                float v = x[xo + j];
                if (amax < Math.abs(v)) {
                    amax = Math.abs(v);
                    max = v;
                }
            }
            float d = max / -8;
            float id = d != 0 ? 1.0f / d : 0.0f;
            QuantMath.putShort(y, yo, QuantMath.toHalf(d));
            for (int j = 0; j < QK / 2; ++j) {
                int xi0 = Math.min(15, (byte) (int) (x[xo + j] * id + 8.5f));
                int xi1 = Math.min(15, (byte) (int) (x[xo + QK / 2 + j] * id + 8.5f));
                y[yo + 2 + j] = (byte) (xi0 | (xi1 << 4));
            }
        }
    }
}
