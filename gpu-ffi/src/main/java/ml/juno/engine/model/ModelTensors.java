package ml.juno.engine.model;

import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import ml.juno.engine.gguf.GgufFile;
import ml.juno.engine.gguf.GgufTensorInfo;
import ml.juno.engine.kernel.Backends;
import ml.juno.engine.kernel.WeightMatrix;
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
        if (t.type() == null || !Backends.supports(t.type())) {
            throw new IllegalArgumentException("tensor " + t.name() + " has block type " + t.type()
                    + ", which the engine cannot compute with; supported: " + supportedTypes());
        }
    }

    static String supportedTypes() {
        return Stream.of(GgmlType.values()).filter(Backends::supports).map(Enum::name).collect(Collectors.joining(", "));
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
        Backends.decode(t.type(), file.data(t), 0, out, 0, n);
        return out;
    }

    /** One-dimensional tensor {@code name} if present. */
    public Optional<float[]> optionalVector(String name, int n) {
        return has(name) ? Optional.of(vector(name, n)) : Optional.empty();
    }

    /**
     * The {@code count} expert matrices of a 3-D tensor of ggml shape {@code [cols, rows, count]} (MoE
     * {@code ffn_*_exps}): expert {@code e} is the dense {@code rows × cols} matrix at slice {@code e}, mapped without
     * copying.
     */
    public WeightMatrix[] experts(String name, int cols, int rows, int count) {
        GgufTensorInfo t = find(name);
        long[] shape = t.shape();
        boolean ok = shape.length == 3 && shape[0] == cols && shape[1] == rows && shape[2] == count;
        if (!ok) {
            throw new IllegalArgumentException("tensor " + name + " has shape " + Arrays.toString(shape) + ", expected ["
                    + cols + ", " + rows + ", " + count + "]");
        }
        checkType(t);
        long bytes = t.type().byteSize(cols) * rows;
        WeightMatrix[] out = new WeightMatrix[count];
        for (int e = 0; e < count; e++) {
            out[e] = WeightMatrix.dense(name + "[" + e + "]", t.type(), file.data(t).asSlice(e * bytes, bytes), rows, cols);
        }
        return out;
    }
}
