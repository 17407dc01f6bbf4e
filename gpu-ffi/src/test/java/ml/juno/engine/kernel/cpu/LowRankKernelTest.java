package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.SplittableRandom;
import ml.juno.engine.kernel.Backend;
import ml.juno.engine.kernel.LowRank;
import org.junit.jupiter.api.Test;

/** {@link Backend#addLowRank}: the Java reference and the CPU backend's vector path against a dense {@code B·A}. */
class LowRankKernelTest {

    private static float[] random(SplittableRandom r, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = (float) r.nextDouble(-1, 1);
        }
        return v;
    }

    @Test
    void lowRankDelta_equalsTheDenseProduct_perRowScale_andSkipsZeroScaleRows() {
        SplittableRandom r = new SplittableRandom(5);
        int in = 77;
        int out = 45;
        int rank = 3;
        int batch = 5;
        LowRank w = new LowRank("t", random(r, rank * in), random(r, out * rank), rank, in, out);
        float[] x = random(r, batch * in);
        float[] start = random(r, batch * out);
        float[] scale = {0.5f, 0f, 2f, -1f, 1f};
        double[] want = new double[batch * out];
        for (int b = 0; b < batch; b++) {
            for (int i = 0; i < out; i++) {
                double s = 0;
                for (int k = 0; k < in; k++) {
                    double ba = 0;
                    for (int j = 0; j < rank; j++) {
                        ba += (double) w.b()[i * rank + j] * w.a()[j * in + k];
                    }
                    s += ba * x[b * in + k];
                }
                want[b * out + i] = start[b * out + i] + scale[b] * s;
            }
        }
        Backend reference = new ScalarBackend();
        try (CpuBackend cpu = new CpuBackend(1)) {
            for (Backend backend : new Backend[] {reference, cpu}) {
                float[] got = start.clone();
                backend.addLowRank(w, x, got, batch, scale, new float[batch * rank]);
                for (int i = 0; i < got.length; i++) {
                    assertEquals(want[i], got[i], 1e-4, backend.name() + " element " + i);
                }
                assertArrayEquals(java.util.Arrays.copyOfRange(start, out, 2 * out), java.util.Arrays.copyOfRange(got, out, 2 * out),
                        "a row of scale 0 is untouched");
            }
            float[] one = start.clone();
            assertThrows(IllegalArgumentException.class, () -> cpu.addLowRank(w, x, one, batch, scale, new float[rank]));
        }
    }
}
