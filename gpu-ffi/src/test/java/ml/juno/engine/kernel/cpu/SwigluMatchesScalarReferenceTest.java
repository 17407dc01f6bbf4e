package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import ml.juno.engine.kernel.GgmlExp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link CpuBackend#swiglu} against {@link ScalarKernels#swiglu} bit for bit: ggml's vector {@code expf} for every value
 * of a row's full chunks of 16, the C library's {@code expf} only for the tail after the last full chunk.
 */
class SwigluMatchesScalarReferenceTest {
    private static final CpuBackend CPU = new CpuBackend(1);
    private static final int ROWS = 3;

    @AfterAll
    static void close() {
        CPU.close();
    }

    /** Multiples of 16 (no tail), tails of 13 and 4 (125, 100; 4 < 8 so a half chunk differs from a tail), tail only (7). */
    @ParameterizedTest(name = "cols {0}")
    @ValueSource(ints = {16, 64, 5632, 125, 100, 7})
    void everyValueIsBitIdenticalWithTheScalarReference(int cols) {
        Random r = new Random(cols);
        float[] gate = new float[ROWS * cols];
        float[] up = new float[ROWS * cols];
        for (int i = 0; i < gate.length; i++) {
            gate[i] = (float) r.nextGaussian() * 4f;
            up[i] = (float) r.nextGaussian();
        }
        float[] ref = gate.clone();
        float[] got = gate.clone();
        ScalarKernels.swiglu(ref, up, ROWS, cols);
        CPU.swiglu(got, up, ROWS, cols);
        int full = cols & -GgmlExp.CHUNK;
        for (int row = 0; row < ROWS; row++) {
            for (int c = 0; c < cols; c++) {
                int i = row * cols + c;
                assertEquals(Float.floatToRawIntBits(ref[i]), Float.floatToRawIntBits(got[i]),
                        "row " + row + " col " + c + " (gate " + gate[i] + ", " + (c < full ? "full chunk" : "tail") + "): "
                                + ref[i] + " vs " + got[i]);
            }
        }
    }

    /** The inputs above are able to tell the two exps apart, so a value sent through the wrong one fails the test. */
    @ParameterizedTest(name = "cols {0}")
    @ValueSource(ints = {16, 64, 5632, 100})
    void theChunkAndTailFormulasDifferOnTheseInputs_inTheSecondHalfOfTheLastChunk(int cols) {
        Random r = new Random(cols);
        float[] gate = new float[ROWS * cols];
        for (int i = 0; i < gate.length; i++) {
            gate[i] = (float) r.nextGaussian() * 4f;
            r.nextGaussian(); // up
        }
        int full = cols & -GgmlExp.CHUNK;
        int differ = 0;
        for (int row = 0; row < ROWS; row++) {
            for (int c = full - 8; c < full; c++) {
                float g = gate[row * cols + c];
                differ += GgmlExp.silu(g) != GgmlExp.siluTail(g) ? 1 : 0;
            }
        }
        assertTrue(differ > 0, "no value of the last chunks' second halves tells silu from siluTail at " + cols + " columns");
    }
}
