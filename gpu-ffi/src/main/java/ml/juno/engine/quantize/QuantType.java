package ml.juno.engine.quantize;

import java.util.Locale;
import ml.juno.engine.tensor.GgmlType;

/**
 * The file types {@code quantize} can write: llama.cpp's {@code llama_ftype} values (stored as
 * {@code general.file_type}) with each one's default tensor type. The K-quant mixes differ only in which
 * tensors get more bits ({@link TensorTypeRules}).
 */
public enum QuantType {
    F32(0, GgmlType.F32),
    F16(1, GgmlType.F16),
    Q4_0(2, GgmlType.Q4_0),
    Q4_1(3, GgmlType.Q4_1),
    Q8_0(7, GgmlType.Q8_0),
    Q5_0(8, GgmlType.Q5_0),
    Q5_1(9, GgmlType.Q5_1),
    Q2_K(10, GgmlType.Q2_K),
    Q3_K_S(11, GgmlType.Q3_K),
    Q3_K_M(12, GgmlType.Q3_K),
    Q3_K_L(13, GgmlType.Q3_K),
    Q4_K_S(14, GgmlType.Q4_K),
    Q4_K_M(15, GgmlType.Q4_K),
    Q5_K_S(16, GgmlType.Q5_K),
    Q5_K_M(17, GgmlType.Q5_K),
    Q6_K(18, GgmlType.Q6_K),
    BF16(32, GgmlType.BF16);

    /** The {@code general.file_type} value (llama_ftype). */
    public final int fileType;
    /** The type every quantizable tensor gets unless a mix rule or override says otherwise. */
    public final GgmlType defaultType;

    QuantType(int fileType, GgmlType defaultType) {
        this.fileType = fileType;
        this.defaultType = defaultType;
    }

    /**
     * Parses a type name as {@code llama-quantize} accepts it, case-insensitively; {@code Q3_K}, {@code Q4_K} and
     * {@code Q5_K} are its aliases for the {@code _M} mixes.
     *
     * @throws IllegalArgumentException for an unknown name, listing the accepted ones
     */
    public static QuantType parse(String name) {
        String n = name.trim().toUpperCase(Locale.ROOT);
        switch (n) {
            case "Q3_K":
                return Q3_K_M;
            case "Q4_K":
                return Q4_K_M;
            case "Q5_K":
                return Q5_K_M;
            default:
                break;
        }
        for (QuantType t : values()) {
            if (t.name().equals(n)) {
                return t;
            }
        }
        StringBuilder known = new StringBuilder();
        for (QuantType t : values()) {
            known.append(known.isEmpty() ? "" : ", ").append(t.name());
        }
        throw new IllegalArgumentException("unknown quantization type '" + name + "' (known: " + known
                + ", and the aliases Q3_K, Q4_K, Q5_K)");
    }
}
