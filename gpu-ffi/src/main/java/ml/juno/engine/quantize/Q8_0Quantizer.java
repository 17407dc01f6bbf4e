package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/** Q8_0: 32 values per block as {@code fp16 d, int8 qs[32]}, d = amax/127 (ggml {@code quantize_row_q8_0_ref}). */
public final class Q8_0Quantizer implements RowQuantizer {
    private static final int QK = 32;

    @Override
    public GgmlType type() {
        return GgmlType.Q8_0;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        RowQuantizers.checkBlocks(type(), n);
        for (int b = 0; b < n / QK; b++, xo += QK, yo += 34) {
            float amax = 0.0f;
            for (int j = 0; j < QK; j++) {
                amax = Math.max(amax, Math.abs(x[xo + j]));
            }
            float d = amax / ((1 << 7) - 1);
            float id = d != 0 ? 1.0f / d : 0.0f;
            QuantMath.putShort(y, yo, QuantMath.toHalf(d));
            for (int j = 0; j < QK; j++) {
                y[yo + 2 + j] = (byte) (int) QuantMath.roundf(x[xo + j] * id);
            }
        }
    }
}
