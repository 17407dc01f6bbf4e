package ml.juno.engine.model;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kernel.WeightMatrix;
import ml.juno.engine.kernel.cpu.ScalarDecode;
import ml.juno.engine.tensor.GgmlType;

/**
 * Looks tensors up in a GGUF file and checks them before any compute: present, of the expected shape, of a block type
 * the kernels handle. Matrices stay memory-mapped; small vectors (norm weights) are decoded to {@code float[]}.
 */
public final class ModelTensors {
    private final GgufFile file;

    public ModelTensors(GgufFile file) {
        this.file = file;
    }

    public boolean has(String name) {
        return file.findTensor(name).isPresent();
    }

    private GgufTensorInfo find(String name) {
        return file.findTensor(name).orElseThrow(() -> new IllegalArgumentException(
                "model " + file.path().getFileName() + " is missing tensor " + name));
    }

    private static void checkType(GgufTensorInfo t) {
        if (t.type() == null || !ScalarDecode.supports(t.type())) {
            throw new IllegalArgumentException("tensor " + t.name() + " has block type " + t.type()
                    + ", which the engine cannot compute with; supported: " + supportedTypes());
        }
    }

    static String supportedTypes() {
        return Stream.of(GgmlType.values()).filter(ScalarDecode::supports).map(Enum::name).collect(Collectors.joining(", "));
    }

    /** Matrix {@code name} of ggml shape {@code [cols, rows]}. */
    public WeightMatrix matrix(String name, int cols, int rows) {
        GgufTensorInfo t = find(name);
        long[] shape = t.shape();
        boolean ok = shape.length == 2 && shape[0] == cols && shape[1] == rows;
        if (!ok) {
            throw new IllegalArgumentException("tensor " + name + " has shape " + Arrays.toString(shape) + ", expected ["
                    + cols + ", " + rows + "]");
        }
        checkType(t);
        return WeightMatrix.dense(name, t.type(), file.data(t), rows, cols);
    }

    /** Matrix {@code name} if present. */
    public Optional<WeightMatrix> optionalMatrix(String name, int cols, int rows) {
        return has(name) ? Optional.of(matrix(name, cols, rows)) : Optional.empty();
    }

    /** One-dimensional tensor {@code name} of {@code n} elements, decoded to floats. */
    public float[] vector(String name, int n) {
        GgufTensorInfo t = find(name);
        long[] shape = t.shape();
        if (shape.length != 1 || shape[0] != n) {
            throw new IllegalArgumentException("tensor " + name + " has shape " + Arrays.toString(shape) + ", expected [" + n + "]");
        }
        checkType(t);
        float[] out = new float[n];
        ScalarDecode.decode(t.type(), file.data(t), 0, out, 0, n);
        return out;
    }
}
