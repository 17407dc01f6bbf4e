package ml.juno.engine.quantize;

import java.util.List;
import ml.juno.engine.tensor.GgmlType;

/**
 * What a quantize run wrote.
 *
 * @param fileType     the {@code general.file_type} written
 * @param tensors      each tensor with its source and output type, in file order
 * @param inputBytes   tensor data bytes read
 * @param outputBytes  tensor data bytes written (without padding)
 * @param fallbacks    tensors that got another type because their rows did not divide into blocks
 */
public record QuantizeReport(QuantType fileType, List<TensorType> tensors, long inputBytes, long outputBytes, int fallbacks) {
    public QuantizeReport {
        tensors = List.copyOf(tensors);
    }

    /** One tensor's types. */
    public record TensorType(String name, GgmlType from, GgmlType to) {
    }
}
