package ml.juno.engine.kernel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import java.util.function.UnaryOperator;
import jdk.incubator.vector.FloatVector;
import org.junit.jupiter.api.Test;

class GgmlExpTest {
    private static final float[] EDGES = {0f, -0f, 1f, -1f, 88.3f, 88.4f, 89f, -87.3f, -103.9f, -104f, -120f, -150f,
        200f, -200f, 1e-30f, -1e-30f, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY, Float.NaN, Float.MIN_VALUE,
        Float.MAX_VALUE, -Float.MAX_VALUE};

    private static float[] inputs() {
        Random r = new Random(7);
        float[] x = new float[8 * 4096];
        System.arraycopy(EDGES, 0, x, 0, EDGES.length);
        for (int i = EDGES.length; i < x.length; i++) {
            x[i] = i % 3 == 0 ? (float) r.nextGaussian() * 4f : (r.nextFloat() - 0.8f) * 120f;
        }
        return x;
    }

    private static void assertVectorMatchesScalar(String what, UnaryOperator<FloatVector> vector, FloatUnaryOperator scalar) {
        float[] x = inputs();
        float[] out = new float[x.length];
        for (int i = 0; i < x.length; i += 8) {
            vector.apply(FloatVector.fromArray(GgmlExp.F8, x, i)).intoArray(out, i);
        }
        for (int i = 0; i < x.length; i++) {
            assertEquals(Float.floatToIntBits(scalar.apply(x[i])), Float.floatToIntBits(out[i]), what + "(" + x[i] + ")");
        }
    }

    interface FloatUnaryOperator {
        float apply(float x);
    }

    @Test
    void vectorExp_isBitIdenticalToTheScalarReference() {
        assertVectorMatchesScalar("expf", GgmlExp::expf, GgmlExp::expf);
    }

    @Test
    void vectorSilu_isBitIdenticalToTheScalarReference() {
        assertVectorMatchesScalar("silu", GgmlExp::silu, GgmlExp::silu);
    }

    /** ggml states 1.45 + 0.5 ulp; measured against the double result, rounded to float for the ulp: up to about 2. */
    @Test
    void exp_isWithinItsErrorBoundOfTheTrueValue_andOverflowsToInfinity() {
        for (float x : inputs()) {
            float e = GgmlExp.expf(x);
            double t = Math.exp(x);
            if (Float.isNaN(x)) {
                assertTrue(Float.isNaN(e));
            } else if (t > Float.MAX_VALUE) {
                assertEquals(Float.POSITIVE_INFINITY, e, "overflow at " + x);
            } else if (t >= Float.MIN_NORMAL) {
                assertTrue(Math.abs(e - t) <= 2.5 * Math.ulp((float) t), "expf(" + x + ") = " + e + " vs " + t);
            } else {
                assertTrue(Math.abs(e - t) <= 2 * Float.MIN_VALUE, "subnormal expf(" + x + ") = " + e + " vs " + t);
            }
        }
    }

    @Test
    void softmax_sumsToOne_andKeepsTheOrder() {
        Random r = new Random(3);
        for (int n : new int[] {1, 5, 16, 37, 128}) {
            float[] x = new float[n + 2];
            for (int i = 1; i <= n; i++) {
                x[i] = (float) r.nextGaussian() * 3f;
            }
            float[] before = x.clone();
            GgmlExp.softmax(x, 1, n);
            double sum = 0;
            for (int i = 1; i <= n; i++) {
                sum += x[i];
                for (int j = 1; j <= n; j++) {
                    if (before[i] > before[j]) {
                        assertTrue(x[i] >= x[j], "softmax must keep the order");
                    }
                }
            }
            assertEquals(1.0, sum, 1e-5, "n = " + n);
            assertEquals(0f, x[0]);
            assertEquals(0f, x[n + 1]);
        }
    }

    @Test
    void sum16_isTheAvx512ReductionTree() {
        float[] v = new float[16];
        for (int i = 0; i < 16; i++) {
            v[i] = i % 2 == 0 ? 1e8f : 1f; // order-sensitive: small values vanish unless paired with each other first
        }
        float t0 = v[0] + v[8];
        float t1 = v[1] + v[9];
        float t2 = v[2] + v[10];
        float t3 = v[3] + v[11];
        float t4 = v[4] + v[12];
        float t5 = v[5] + v[13];
        float t6 = v[6] + v[14];
        float t7 = v[7] + v[15];
        assertEquals(((t0 + t4) + (t2 + t6)) + ((t1 + t5) + (t3 + t7)), GgmlExp.sum16(v, 0));
        assertEquals(8e8f + 8f, GgmlExp.sum16(v, 0), 0f, "the odd lanes are summed among themselves");
    }
}
