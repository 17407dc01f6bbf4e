package ml.juno.engine.kernel.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Arrays;
import java.util.Random;
import ml.juno.engine.kernel.RopeShape;
import org.junit.jupiter.api.Test;

/**
 * RMSNorm, RoPE, SwiGLU and the residual add of a prompt's many rows run on the compute team in contiguous ranges: a
 * team of three must give, bit for bit, what one thread gives, for row counts that do and do not divide, widths with and
 * without a vector tail, and both RoPE layouts.
 */
class TeamRowStepsTest {

    private static float[] gaussian(int n, long seed) {
        Random r = new Random(seed);
        float[] a = new float[n];
        for (int i = 0; i < n; i++) {
            a[i] = (float) r.nextGaussian();
        }
        return a;
    }

    @Test
    void aTeamOfThree_givesOneThreadsBits() {
        try (CpuBackend team = new CpuBackend(3); CpuBackend one = new CpuBackend(1)) {
            for (int rows : new int[] {16, 37, 64}) {
                for (int width : new int[] {125, 512}) {
                    String what = rows + " rows of " + width;
                    float[] x = gaussian(rows * width, rows + width);
                    float[] w = gaussian(width, 7);
                    float[] a = new float[x.length];
                    float[] b = new float[x.length];
                    team.rmsNorm(x, w, 1e-5f, a, rows, width);
                    one.rmsNorm(x, w, 1e-5f, b, rows, width);
                    assertArrayEquals(b, a, "rmsNorm, " + what);
                    assertFalse(Arrays.equals(a, new float[a.length]), what);

                    float[] g1 = gaussian(rows * width, 3);
                    float[] g2 = g1.clone();
                    float[] up = gaussian(rows * width, 4);
                    team.swiglu(g1, up, rows, width);
                    one.swiglu(g2, up, rows, width);
                    assertArrayEquals(g2, g1, "swiglu, " + what);

                    float[] acc1 = gaussian(rows * width, 5);
                    float[] acc2 = acc1.clone();
                    float[] d = gaussian(rows * width, 6);
                    team.add(acc1, d, rows * width);
                    one.add(acc2, d, rows * width);
                    assertArrayEquals(acc2, acc1, "add, " + what);
                }
                for (boolean neox : new boolean[] {false, true}) {
                    RopeShape shape = new RopeShape(4, 16, 12, neox);
                    float[] cos = gaussian(rows * 6, 8);
                    float[] sin = gaussian(rows * 6, 9);
                    float[] q1 = gaussian(rows * 64, 10);
                    float[] q2 = q1.clone();
                    team.rope(q1, shape, rows, cos, sin);
                    one.rope(q2, shape, rows, cos, sin);
                    assertArrayEquals(q2, q1, "rope, " + rows + " rows, neox " + neox);
                }
            }
        }
    }
}
