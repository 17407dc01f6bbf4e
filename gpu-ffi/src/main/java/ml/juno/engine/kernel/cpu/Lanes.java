package ml.juno.engine.kernel.cpu;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Vector helpers whose results are fixed by the code, not by the JIT: {@code reduceLanes(ADD)} and
 * {@code lanewise(EXP)} may give different bits interpreted and compiled (the Vector API allows reordered reductions
 * and library exp), which would make a row's result depend on warm-up, so kernels use these instead. Built from
 * IEEE add/mul/fma and lane moves only.
 */
public final class Lanes {
    static final VectorSpecies<Float> F = FloatVector.SPECIES_PREFERRED;
    private static final int L = F.length();
    @SuppressWarnings("unchecked")
    private static final VectorShuffle<Float>[] ROTATE = new VectorShuffle[L];

    static {
        for (int h = 1; h < L; h <<= 1) {
            int hh = h;
            ROTATE[h] = VectorShuffle.fromOp(F, i -> (i + hh) & (L - 1));
        }
    }

    private Lanes() {}

    /**
     * Sum of the lanes in a fixed pairwise order (lane {@code i} plus lane {@code i + L/2}, recursively). 8 and 16 lanes
     * use constant lane extractions: a shuffle loaded from a table is not always intrinsified and then runs the Vector
     * API's slow Java fallback.
     */
    public static float sum(FloatVector v) {
        if (L == 8) {
            return ((v.lane(0) + v.lane(4)) + (v.lane(2) + v.lane(6))) + ((v.lane(1) + v.lane(5)) + (v.lane(3) + v.lane(7)));
        }
        if (L == 16) {
            float a = ((v.lane(0) + v.lane(8)) + (v.lane(4) + v.lane(12))) + ((v.lane(2) + v.lane(10)) + (v.lane(6) + v.lane(14)));
            float b = ((v.lane(1) + v.lane(9)) + (v.lane(5) + v.lane(13))) + ((v.lane(3) + v.lane(11)) + (v.lane(7) + v.lane(15)));
            return a + b;
        }
        for (int h = L >> 1; h >= 1; h >>= 1) {
            v = v.add(v.rearrange(ROTATE[h]));
        }
        return v.lane(0);
    }

    private static final float LOG2E = 1.44269504088896341f;
    private static final float LN2_HI = 0.693359375f;
    private static final float LN2_LO = -2.12194440e-4f;
    private static final float ROUND = 12582912f; // 1.5·2^23: adding and subtracting rounds to an integer

    /** {@code e^x} per lane, relative error ~2e-7 (Cephes expf polynomial); inputs clamped to [-87, 88]. */
    public static FloatVector exp(FloatVector x) {
        x = x.max(-87f).min(88f);
        FloatVector n = x.mul(LOG2E).add(ROUND).sub(ROUND);
        FloatVector r = n.fma(FloatVector.broadcast(F, -LN2_HI), x);
        r = n.fma(FloatVector.broadcast(F, -LN2_LO), r);
        FloatVector p = FloatVector.broadcast(F, 1.9875691500e-4f);
        p = p.fma(r, FloatVector.broadcast(F, 1.3981999507e-3f));
        p = p.fma(r, FloatVector.broadcast(F, 8.3334519073e-3f));
        p = p.fma(r, FloatVector.broadcast(F, 4.1665795894e-2f));
        p = p.fma(r, FloatVector.broadcast(F, 1.6666665459e-1f));
        p = p.fma(r, FloatVector.broadcast(F, 5.0000001201e-1f));
        FloatVector r2 = r.mul(r);
        p = p.fma(r2, r).add(1f);
        IntVector pow = ((IntVector) n.convert(VectorOperators.F2I, 0)).add(127).lanewise(VectorOperators.LSHL, 23);
        return p.mul(pow.reinterpretAsFloats());
    }
}
