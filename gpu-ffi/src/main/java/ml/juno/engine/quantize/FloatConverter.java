package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/**
 * The plain float targets: F32 (copied), F16 (round to nearest even) and BF16 (ggml's rounding, quiet NaNs),
 * as ggml_quantize_chunk writes them.
 */
public final class FloatConverter implements RowQuantizer {
    private final GgmlType type;

    public FloatConverter(GgmlType type) {
        if (type != GgmlType.F32 && type != GgmlType.F16 && type != GgmlType.BF16) {
            throw new IllegalArgumentException("not a float type: " + type);
        }
        this.type = type;
    }

    @Override
    public GgmlType type() {
        return type;
    }

    @Override
    public void quantize(float[] x, int xo, int n, byte[] y, int yo) {
        switch (type) {
            case F16 -> {
                for (int i = 0; i < n; i++) {
                    QuantMath.putShort(y, yo + 2 * i, QuantMath.toHalf(x[xo + i]));
                }
            }
            case BF16 -> {
                for (int i = 0; i < n; i++) {
                    QuantMath.putShort(y, yo + 2 * i, QuantMath.toBf16(x[xo + i]));
                }
            }
            default -> {
                for (int i = 0; i < n; i++) {
                    Q5_0Quantizer.putInt(y, yo + 4 * i, Float.floatToRawIntBits(x[xo + i]));
                }
            }
        }
    }
}
