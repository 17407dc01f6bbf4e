package ml.juno.engine.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * {@code e^x} computed exactly as llama.cpp's CPU backend computes it inside its SiLU and softmax loops, so that both
 * give the same bits here: ggml's vector {@code expf} for AVX-512 (a degree-5 polynomial on {@code x − n·ln 2} with
 * {@code n = round(x·log2 e)}, every step one IEEE operation or FMA, then {@code ·2^n}), which that build applies to
 * full chunks of 16 values, and the C library's {@code expf} (correctly rounded here: {@code (float) Math.exp})
 * for the scalar tail of a row. Maximum error 1.45 + 0.5 ulp against the true value; results beyond ±192 in the
 * exponent are 0 or infinity. The scalar {@link #expf(float)} is the reference of the vector {@link #expf(FloatVector)}:
 * the two agree bit for bit.
 *
 * <p>Why it matters: activations are rounded to F16 or Q8 before the next product, so a one-ulp difference here moves
 * a value across a rounding boundary once in a while, and small random models amplify that to 1e-3 on the logits.
 */
public final class GgmlExp {
    /** Values per chunk that llama.cpp's AVX-512 loops hand to the vector {@code expf}; the rest of a row is scalar. */
    public static final int CHUNK = 16;

    static final VectorSpecies<Float> F8 = FloatVector.SPECIES_256;
    private static final float SHIFT = 0x1.8p23f;
    private static final float LOG2E = 0x1.715476p+0f;
    private static final float LN2_HI = 0x1.62e4p-1f;
    private static final float LN2_LO = 0x1.7f7d1cp-20f;
    private static final float C1 = 0x1.ffffecp-1f;
    private static final float C2 = 0x1.fffdb6p-2f;
    private static final float C3 = 0x1.555e66p-3f;
    private static final float C4 = 0x1.573e2ep-5f;
    private static final float C5 = 0x1.0e4020p-7f;
    private static final float LIMIT = 192f;

    private GgmlExp() {}

    /** One lane of ggml's AVX-512 vector {@code expf}. */
    public static float expf(float x) {
        float z = Math.fma(x, LOG2E, SHIFT);
        float n = z - SHIFT;
        float b = Math.fma(-n, LN2_LO, Math.fma(-n, LN2_HI, x));
        float u = b * b;
        float j = Math.fma(Math.fma(Math.fma(C5, b, C4), u, Math.fma(C3, b, C2)), u, Math.fma(C1, b, 1f));
        if (Math.abs(n) > LIMIT) {
            return n <= 0f ? 0f : Float.POSITIVE_INFINITY;
        }
        // j·2^n (vscalefps): two exact power-of-two steps, so only the last one rounds (subnormal results)
        int ni = (int) n;
        int a = ni >> 1;
        return j * Float.intBitsToFloat((a + 127) << 23) * Float.intBitsToFloat((ni - a + 127) << 23);
    }

    /** The C library's {@code expf}, which llama.cpp uses for the values after the last full chunk. */
    public static float libmExpf(float x) {
        return (float) Math.exp(x);
    }

    /** {@link #expf(float)} on eight lanes. */
    public static FloatVector expf(FloatVector x) {
        FloatVector z = x.fma(LOG2E, SHIFT);
        FloatVector n = z.sub(SHIFT);
        FloatVector m = n.neg();
        FloatVector b = m.fma(FloatVector.broadcast(F8, LN2_LO), m.fma(FloatVector.broadcast(F8, LN2_HI), x));
        FloatVector u = b.mul(b);
        FloatVector p = FloatVector.broadcast(F8, C5).fma(b, FloatVector.broadcast(F8, C4));
        FloatVector q = FloatVector.broadcast(F8, C3).fma(b, FloatVector.broadcast(F8, C2));
        FloatVector r = FloatVector.broadcast(F8, C1).fma(b, FloatVector.broadcast(F8, 1f));
        FloatVector j = p.fma(u, q).fma(u, r);
        IntVector ni = (IntVector) n.convert(VectorOperators.F2I, 0);
        IntVector a = ni.lanewise(VectorOperators.ASHR, 1);
        FloatVector pa = a.add(127).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
        FloatVector pc = ni.sub(a).add(127).lanewise(VectorOperators.LSHL, 23).reinterpretAsFloats();
        FloatVector res = j.mul(pa).mul(pc);
        VectorMask<Float> out = n.abs().compare(VectorOperators.GT, LIMIT);
        if (!out.anyTrue()) {
            return res;
        }
        FloatVector alt = FloatVector.zero(F8).blend(Float.POSITIVE_INFINITY, n.compare(VectorOperators.GT, 0f));
        return res.blend(alt, out);
    }

    /**
     * Sum of 16 values {@code v[o..o+16)} in {@code _mm512_reduce_add_ps}'s order: {@code v[i] + v[i+8]}, then
     * ((0+4)+(2+6)) + ((1+5)+(3+7)) over those eight.
     */
    public static float sum16(float[] v, int o) {
        float t0 = v[o] + v[o + 8];
        float t1 = v[o + 1] + v[o + 9];
        float t2 = v[o + 2] + v[o + 10];
        float t3 = v[o + 3] + v[o + 11];
        float t4 = v[o + 4] + v[o + 12];
        float t5 = v[o + 5] + v[o + 13];
        float t6 = v[o + 6] + v[o + 14];
        float t7 = v[o + 7] + v[o + 15];
        return ((t0 + t4) + (t2 + t6)) + ((t1 + t5) + (t3 + t7));
    }

    /**
     * ggml's softmax of {@code x[o..o+n)} in place, as its AVX-512 build computes it: {@code e^(x−max)} with
     * {@link #expf(float)} over full chunks of 16 (each chunk's sum formed by {@link #sum16} and added to a double), the
     * tail with {@link #libmExpf} added one by one, then every value multiplied by {@code (float) (1/sum)}. Scalar: for
     * short rows (router logits); attention uses the vector form in the backends.
     */
    public static void softmax(float[] x, int o, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i++) {
            max = Math.max(max, x[o + i]);
        }
        double sum = 0;
        int i = 0;
        for (; i + CHUNK <= n; i += CHUNK) {
            for (int l = 0; l < CHUNK; l++) {
                x[o + i + l] = expf(x[o + i + l] - max);
            }
            sum += sum16(x, o + i);
        }
        for (; i < n; i++) {
            float e = libmExpf(x[o + i] - max);
            x[o + i] = e;
            sum += e;
        }
        float inv = (float) (1.0 / sum);
        for (int k = 0; k < n; k++) {
            x[o + k] *= inv;
        }
    }

    /** ggml's SiLU {@code x / (1 + e^−x)} of a value in a full chunk (the tail uses {@link #libmExpf}). */
    public static float silu(float x) {
        return x / (1f + expf(0f - x));
    }

    /** ggml's SiLU of a value after the last full chunk of its row. */
    public static float siluTail(float x) {
        return x / (1f + libmExpf(-x));
    }

    /** {@link #silu(float)} on eight lanes. */
    public static FloatVector silu(FloatVector x) {
        return x.div(expf(FloatVector.zero(F8).sub(x)).add(1f));
    }
}
