package ml.juno.engine.kernel.cpu;

import java.lang.foreign.MemorySegment;

/**
 * One weight row of a quantized type split the way ggml's integer dot products see it: integer quants {@code q}
 * (16-bit, natural element order), an integer scale per sub-block {@code sc}, a float scale per super-block {@code d},
 * and the min terms ({@code dmin} with integer sub-block mins {@code m} for K-quants, a float {@code m} per block for
 * Q4_1/Q5_1). Each type's {@link QuantKernel} fills it, in vector code or in a scalar reference that produces the same
 * numbers.
 */
final class QuantRow {
    final short[] q;
    /** The quants as floats in {@link QuantLanes#lanes lane order}, times their sub-block scale for K-quants. */
    final float[] wf;
    final int[] sc;
    final float[] d;
    final float[] dmin;
    final float[] m;
    /**
     * Q6_K, per super-block, the sub-block scales of each quad lane's offset pair ({@link Q6_KKernel}): lane 2M takes
     * sub-blocks 2M ({@code scA}) and 2M+1 ({@code scB}), lane 2M+1 sub-blocks 8+2M and 9+2M ({@link Q6_KKernel#dotFloatQ6}).
     */
    final float[] scA;
    final float[] scB;
    /** Scratch for a tile's half-super-block lane sums ({@link Q6_KKernel#dotFloat4}): 128 per 256 columns. */
    final float[] halves;
    /** This row as a tile of one ({@link Q6_KKernel#dotFloatQ6}). */
    final QuantRow[] one = new QuantRow[1];
    /** Scratch for the lanes of eight accumulators ({@link SuperBlockKernel#dotFloat4x2}). */
    final float[] lanes = new float[64];
    /** Scratch for the scalar reference's integer lanes ({@link Q6_KKernel#dotScalar}). */
    final int[] intLanes = new int[8];
    /** The kernel of the type last decoded into this row, and its length. */
    QuantKernel kernel;
    int cols;

    QuantRow(int maxCols) {
        q = new short[maxCols];
        wf = new float[maxCols];
        sc = new int[maxCols / 16];
        d = new float[maxCols / 32];
        dmin = new float[maxCols / 32];
        m = new float[maxCols / 16];
        scA = new float[maxCols / 32];
        scB = new float[maxCols / 32];
        halves = new float[maxCols / 2];
    }

    /** Decodes {@code cols} elements of {@code kernel}'s type starting at byte {@code off} of {@code s}, in vector code. */
    void decode(QuantKernel kernel, MemorySegment s, long off, int cols) {
        this.kernel = kernel;
        this.cols = cols;
        kernel.decodeQuants(this, s, off, cols);
    }

    /** {@link #decode} by the scalar reference: the same numbers. */
    void decodeScalar(QuantKernel kernel, MemorySegment s, long off, int cols) {
        this.kernel = kernel;
        this.cols = cols;
        kernel.decodeQuantsScalar(this, s, off, cols);
    }

    /** Fills {@link #wf} from the decoded quants (and sub-block scales): the input of the batched dot products. */
    void toFloatLanes() {
        kernel.toFloatLanes(this);
    }
}
