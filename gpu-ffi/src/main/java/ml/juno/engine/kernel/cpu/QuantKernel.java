package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;
import ml.juno.engine.tensor.GgmlType;

/**
 * The integer dot products of a quantized weight type with quantized activations ({@link QuantActivations}: Q8_0/Q8_1
 * blocks of 32 or Q8_K blocks of 256), computed the way ggml's integer kernels compute them: exact integer sums per
 * (sub-)block ({@link QuantLanes}), integer sub-block scales applied in integers (K-quants), then one float multiply-add
 * per (super-)block with {@code d_w·d_x}; min terms from the activation block sums.
 *
 * <p>Two paths give bit-identical results. Few activation rows: {@link #dotRows} builds the quant vectors in registers
 * straight from the mapped blocks (types with such a kernel, {@link CpuTypeTraits#fusedBelow}). Many: a tile of weight
 * rows is decoded once ({@link #decodeQuants}, {@link #toFloatLanes}) into float lanes holding the same exact integers,
 * then multiplied with every activation row ({@link #dotTilePairs}, {@link #dotFloat4}, {@link #dotFloat}). Each path
 * has a scalar reference ({@link #decodeQuantsScalar}, {@link #dotScalar}).
 */
abstract class QuantKernel extends BlockKernel {
    /** Elements per sub-block with one integer scale: 16 or 32 for the K-quants, the block (32) for the others. */
    final int subBlock;

    QuantKernel(GgmlType type, int subBlock) {
        super(type);
        this.subBlock = subBlock;
    }

    /** Splits {@code cols} elements from byte {@code off} of {@code s} into {@code row}'s quants, scales and mins. */
    void decodeQuants(QuantRow row, MemorySegment s, long off, int cols) {
        decodeQuantsScalar(row, s, off, cols);
    }

    /** The scalar reference of {@link #decodeQuants}. */
    abstract void decodeQuantsScalar(QuantRow row, MemorySegment s, long off, int cols);

    /** Fills {@link QuantRow#wf} from the decoded quants (and sub-block scales): the input of {@link #dotFloat}. */
    abstract void toFloatLanes(QuantRow row);

    /** Fills the float lanes of the first {@code batch} activation rows that this type's batched kernels read. */
    void toFloatLanes(QuantActivations x, int batch) {
        x.toFloatLanes(batch, false);
    }

    /**
     * The integer dot product of decoded row {@code w} with activation row {@code xRow}, from their float lanes: every
     * product and partial sum is an integer below 2^24 (checked for the worst case of each type), so each float lane
     * holds exactly the integer the single-row kernel's 32-bit lane holds, and the result is bit-identical to it.
     */
    abstract float dotFloat(QuantRow w, QuantActivations x, int xRow);

    /**
     * {@link #dotFloat} of four weight rows with one activation row, sharing each activation load; results at
     * {@code out[o0..o0+4)}, each bit-identical to {@link #dotFloat} of that row.
     */
    abstract void dotFloat4(QuantRow[] w, QuantActivations x, int xRow, float[] out, int o0);

    /**
     * A tile of four decoded weight rows (rows {@code r0..r0+4} of a matrix of {@code rows}) with activation rows taken
     * two at a time from 0 while two remain: {@code out[b·rows + r0 + t]}, each bit-identical to {@link #dotFloat}.
     * Returns the number of activation rows done (the rest go through {@link #dotFloat4}). {@code corr} is scratch of
     * at least {@code 4·batch} floats.
     */
    abstract int dotTilePairs(QuantRow[] tile, QuantActivations x, int batch, float[] out, int r0, int rows, float[] corr);

    /** The scalar reference of {@link #dotFloat}: integer sums in {@code int}, as ggml's generic code. */
    abstract float dotScalar(QuantRow w, QuantActivations x, int xRow);

    /**
     * {@code out[o0 + r] = dot(weight row r, activation row xRow)} for {@code r0 <= r < r1}, each row built in
     * registers straight from the mapped blocks; only for types with a single-row kernel ({@link CpuTypeTraits#fusedBelow}).
     * The row loop lives in each type's own method, so the JIT compiles each as its own unit.
     */
    void dotRows(MemorySegment s, long stride, int cols, QuantActivations x, int xRow, float[] out, int o0, int r0, int r1) {
        throw new UnsupportedOperationException(type + " has no single-row kernel");
    }
}
