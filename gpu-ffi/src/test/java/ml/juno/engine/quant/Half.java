package ml.juno.engine.quant;

/**
 * IEEE binary16 and bfloat16 conversions, as ggml does them (ggml-impl.h): fp16 both ways is exact IEEE with
 * round-to-nearest-even; bf16 from float rounds to nearest even and turns NaN into a quiet NaN.
 */
public final class Half {

    private Half() {}

    /** binary16 bits to float (exact). */
    public static float toFloat(short h) {
        return Float.float16ToFloat(h);
    }

    /** float to binary16 bits, round to nearest even; overflow gives infinity. */
    public static short fromFloat(float f) {
        return Float.floatToFloat16(f);
    }

    /** bfloat16 bits to float (exact: the high half of the float). */
    public static float bf16ToFloat(short b) {
        return Float.intBitsToFloat(b << 16);
    }

    /** float to bfloat16 bits as ggml_compute_fp32_to_bf16: NaN forced quiet, otherwise round to nearest even. */
    public static short floatToBf16(float f) {
        int u = Float.floatToRawIntBits(f);
        if ((u & 0x7fff_ffff) > 0x7f80_0000) {
            return (short) ((u >>> 16) | 64);
        }
        return (short) ((u + (0x7fff + ((u >>> 16) & 1))) >>> 16);
    }
}
