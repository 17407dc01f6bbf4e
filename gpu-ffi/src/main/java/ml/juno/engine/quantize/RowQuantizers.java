package ml.juno.engine.quantize;

import ml.juno.engine.tensor.GgmlType;

/** Makes the {@link RowQuantizer} for a target type. */
public final class RowQuantizers {
    private RowQuantizers() {
    }

    /** The types this package can write. */
    public static boolean supports(GgmlType type) {
        return switch (type) {
            case F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K -> true;
            default -> false;
        };
    }

    /** A fresh quantizer (with its own scratch buffers) for {@code type}, on the fast path where there is one. */
    public static RowQuantizer create(GgmlType type) {
        return create(type, true);
    }

    /**
     * A fresh quantizer for {@code type}. {@code lanes} picks the Vector API path of the K-quants; it
     * writes the same bytes as the scalar path and is about five times faster once the JIT has compiled it, but
     * runs far slower until then (a few seconds of warm-up), so it only pays off on large jobs.
     */
    public static RowQuantizer create(GgmlType type, boolean lanes) {
        return switch (type) {
            case F32, F16, BF16 -> new FloatConverter(type);
            case Q8_0 -> new Q8_0Quantizer();
            case Q4_0 -> new Q4_0Quantizer();
            case Q4_1 -> new Q4_1Quantizer();
            case Q5_0 -> new Q5_0Quantizer();
            case Q5_1 -> new Q5_1Quantizer();
            case Q2_K -> new Q2_KQuantizer(lanes);
            case Q3_K -> new Q3_KQuantizer(lanes);
            case Q4_K -> new Q4_KQuantizer(lanes);
            case Q5_K -> new Q5_KQuantizer(lanes);
            case Q6_K -> new Q6_KQuantizer(lanes);
            default -> throw new IllegalArgumentException("no quantizer for type " + type);
        };
    }

    /** Whether {@code type} has a separate lane path. */
    static boolean hasLanes(GgmlType type) {
        return type == GgmlType.Q2_K || type == GgmlType.Q3_K || type == GgmlType.Q4_K || type == GgmlType.Q5_K || type == GgmlType.Q6_K;
    }

    static void checkBlocks(GgmlType type, int n) {
        if (n < 0 || n % type.blockSize != 0) {
            throw new IllegalArgumentException(type + ": row of " + n + " values is not a multiple of the block size " + type.blockSize);
        }
    }
}
